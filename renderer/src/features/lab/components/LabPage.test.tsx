// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { join } from 'node:path';
import { renderWithEngine } from '../../../test/render-with-engine';
import { useNavigation } from '../../../lib/navigation';
import { LabService } from '../../../../../electron/engine/lab/service';
import { emptySnapshot } from '../../../../../electron/engine/lab/kernel';
import { FakeNetnsManager } from '../../../../../electron/engine/testing/fake-netns';
import { NodeProcessRunner } from '../../../../../electron/engine/os/exec';
import { capabilitiesFrom, LabPage } from './LabPage';

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
    const editor = screen.getByLabelText<HTMLTextAreaElement>('Conflist');
    expect(editor.value).toContain('"from-panel"');
    expect(screen.getByText('from /etc/cni/net.d/10-x.conflist')).toBeTruthy();
    expect(await screen.findByText('valid')).toBeTruthy();
    expect(useNavigation.getState().labSeed).toBeUndefined();
    fireEvent.change(editor, {
      target: { value: '{\n  "cniVersion": "1.0.0",\n  "name": "x",\n  "plugins": [ { "type": "bridge", } ]\n}' },
    });
    expect((await screen.findByTestId('lab-issues')).textContent).toContain('line 4, column 36');
    expect(document.querySelector('.lab-gutter-bad')?.textContent).toBe('4');
    expect((screen.getByRole('button', { name: 'Run' }) as HTMLButtonElement).disabled).toBe(true);
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

  it('lists no runs on a fresh state dir', async () => {
    await renderWithEngine(<LabPage />, { lab });
    await waitFor(() => expect(screen.getByTestId('lab-runs').querySelectorAll('tbody tr').length).toBe(0));
  });
});
