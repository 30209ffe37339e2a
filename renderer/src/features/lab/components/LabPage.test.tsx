// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { EditorView } from '@codemirror/view';
import { forEachDiagnostic } from '@codemirror/lint';
import { join } from 'node:path';
import { renderWithEngine } from '../../../test/render-with-engine';
import { useNavigation } from '../../../lib/navigation';
import { LabService } from '../../../../../electron/engine/lab/service';
import { emptySnapshot } from '../../../../../electron/engine/lab/kernel';
import { FakeNetnsManager } from '../../../../../testkit/fakes/fake-netns';
import { NodeProcessRunner } from '../../../../../electron/engine/os/exec';
import { LabPage } from './LabPage';
import { capabilitiesFrom } from '../model/capabilities';

/** the real lab service (validation, list, save) with the kernel and namespaces faked: nothing here runs a plugin */
const lab = (dir: string) =>
  new LabService({
    options: {
      stateDir: dir,
      netnsDir: join(dir, 'netns'),
      cniConfDir: join(dir, 'lab-net.d'),
      cniBinDirs: ['/usr/lib/cni'],
      pluginTimeoutMs: 5000,
    },
    runner: new NodeProcessRunner(),
    netns: new FakeNetnsManager(join(dir, 'netns')),
    kernel: { read: async () => ({ snapshot: emptySnapshot(), errors: [] }) },
    liveNetworks: async () => [],
    recordedAdd: async () => {
      throw new Error('none');
    },
  });

// jsdom has no shadow-root selection: CodeMirror then reads it through execCommand, which jsdom lacks too
if (typeof document.execCommand !== 'function') document.execCommand = () => false;
// nor layout: CodeMirror measures text ranges; an empty rect list keeps its measuring quiet
const noRect = { x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0, toJSON: () => ({}) } as DOMRect;
if (typeof Range.prototype.getClientRects !== 'function') {
  Range.prototype.getClientRects = () => Object.assign([], { item: () => null }) as unknown as DOMRectList;
  Range.prototype.getBoundingClientRect = () => noRect;
}

/** the CodeMirror view behind the lab's editor (it lives in a shadow root, loaded lazily) */
async function editorView(): Promise<EditorView> {
  const host = await screen.findByTestId('lab-editor');
  await waitFor(() => expect(host.shadowRoot?.querySelector('.cm-editor')).toBeTruthy());
  return EditorView.findFromDOM(host.shadowRoot!.querySelector<HTMLElement>('.cm-editor')!)!;
}

/** replaces the document as a user edit would (userEvent input), so the page sees it as typed */
function typeInto(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, userEvent: 'input.type' });
}

function diagnosticsOf(view: EditorView): Array<{ from: number; to: number; message: string }> {
  const out: Array<{ from: number; to: number; message: string }> = [];
  forEachDiagnostic(view.state, (d, from, to) => out.push({ from, to, message: d.message }));
  return out;
}

afterEach(() => {
  cleanup();
  useNavigation.setState({ labSeed: undefined, view: 'lab' });
});

describe('LabPage', () => {
  it('opens the conflist handed over by the CNI panel, and shows a JSON error at its line with Run disabled', async () => {
    useNavigation
      .getState()
      .openInLab(
        '{\n  "cniVersion": "1.0.0",\n  "name": "from-panel",\n  "plugins": [ { "type": "loopback" } ]\n}',
        '/etc/cni/net.d/10-x.conflist',
      );
    await renderWithEngine(<LabPage />, { lab });
    const view = await editorView();
    const content = view.contentDOM;
    // keyboard reachable and named: a focusable multi-line textbox labelled Conflist
    expect(content.getAttribute('aria-label')).toBe('Conflist');
    expect(content.getAttribute('role')).toBe('textbox');
    expect(content.getAttribute('contenteditable')).toBe('true');
    expect(view.state.doc.toString()).toContain('"from-panel"');
    expect(screen.getByText('from /etc/cni/net.d/10-x.conflist')).toBeTruthy();
    expect(await screen.findByText('valid')).toBeTruthy();
    expect(useNavigation.getState().labSeed).toBeUndefined();
    const bad = '{\n  "cniVersion": "1.0.0",\n  "name": "x",\n  "plugins": [ { "type": "bridge", } ]\n}';
    typeInto(view, bad);
    expect((await screen.findByTestId('lab-issues')).textContent).toContain('line 4, column 36');
    // the engine's parse position is underlined in the editor: the character the parser stopped at
    await waitFor(() => expect(diagnosticsOf(view).length).toBe(1));
    const [d] = diagnosticsOf(view);
    expect(bad.slice(d!.from, d!.to)).toBe('}');
    expect(view.state.doc.lineAt(d!.from).number).toBe(4);
    expect(d!.from - view.state.doc.line(4).from + 1).toBe(36);
    expect(content.querySelector('.cm-lintRange-error')?.textContent).toBe('}');
    // the button selects that range in the editor
    fireEvent.click(screen.getByRole('button', { name: 'line 4, column 36' }));
    expect(view.state.selection.main.from).toBe(d!.from);
    expect(view.state.selection.main.to).toBe(d!.to);
    expect((screen.getByRole('button', { name: 'Run' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('underlines a schema error on the offending value (envelope field), not only at a parse position', async () => {
    await renderWithEngine(<LabPage />, { lab });
    const view = await editorView();
    const text = '{\n  "cniVersion": "1.0.0",\n  "name": 42,\n  "plugins": [ { "type": "loopback" } ]\n}';
    typeInto(view, text);
    expect((await screen.findByTestId('lab-issues')).textContent).toMatch(/line 3, column 11.*name/);
    await waitFor(() => expect(diagnosticsOf(view).length).toBe(1));
    const [d] = diagnosticsOf(view);
    expect(text.slice(d!.from, d!.to)).toBe('42');
    expect(d!.message).toMatch(/^name: /);
    // fixing it clears the underline and enables Run
    typeInto(view, text.replace('42', '"ok"'));
    expect(await screen.findByText('valid')).toBeTruthy();
    await waitFor(() => expect(diagnosticsOf(view)).toEqual([]));
    expect((screen.getByRole('button', { name: 'Run' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('reads capability args from the form, naming the field that is wrong', () => {
    const base = { ports: '', ingress: '', egress: '', dns: '', ips: '', mac: '', cgroupPath: '' };
    expect(capabilitiesFrom({ ...base, ports: '8080:80, 5353:53/udp', ingress: '1000000', dns: '10.0.0.10' }).caps).toEqual({
      portMappings: [
        { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
        { hostPort: 5353, containerPort: 53, protocol: 'udp' },
      ],
      bandwidth: { ingressRate: 1000000, egressRate: undefined },
      dns: { servers: ['10.0.0.10'] },
    });
    expect(capabilitiesFrom({ ...base, ports: '80' }).problem).toMatch(/HOST:CONTAINER/);
  });

  it('takes rates as Kubernetes quantities through the one rate parser the pod form and the CLI use (5M is 5 000 000 bit/s)', () => {
    const base = { ports: '', ingress: '', egress: '', dns: '', ips: '', mac: '', cgroupPath: '' };
    expect(capabilitiesFrom({ ...base, ingress: '5M', egress: '512Ki' }).caps.bandwidth).toEqual({
      ingressRate: 5_000_000,
      egressRate: 524_288,
    });
    expect(capabilitiesFrom({ ...base, ingress: '10M', egress: '1Gi' }).caps.bandwidth).toEqual({
      ingressRate: 10_000_000,
      egressRate: 2 ** 30,
    });
    expect(capabilitiesFrom({ ...base, ingress: '500k', egress: '0' }).caps.bandwidth).toEqual({ ingressRate: 500_000, egressRate: 0 });
    expect(capabilitiesFrom({ ...base, ingress: '5X' }).problem).toMatch(/^ingress bandwidth "5X": .*5M/);
    expect(capabilitiesFrom({ ...base, egress: '5 M' }).problem).toMatch(/^egress bandwidth "5 M": quantities must match/);
    expect(capabilitiesFrom({ ...base, ingress: '10' }).problem).toContain('unreasonably small');
  });

  it('lists no runs on a fresh state dir', async () => {
    await renderWithEngine(<LabPage />, { lab });
    await waitFor(() => expect(screen.getByTestId('lab-runs').querySelectorAll('tbody tr').length).toBe(0));
  });
});
