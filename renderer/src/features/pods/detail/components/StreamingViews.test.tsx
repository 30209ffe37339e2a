// @vitest-environment jsdom
/**
 * The log viewer, the terminal and port-forward through the real router and engine. The log viewer reads a real CRI
 * log file (what the log shim writes is the OS boundary, written here by the test). Exec and port-forward need the
 * endpoint's ContainerStreaming, which the fake container runtime does not have: they run over a tiny in-test
 * implementation at that interface (testkit/fakes/toy-streaming.ts); the real one is exercised by the
 * e2e specs (e2e/specs/container-streaming.spec.ts).
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { useState } from 'react';
import type { Terminal } from '@xterm/xterm';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { ToyStreaming } from '../../../../../../testkit/fakes/toy-streaming';
import { LogViewer } from './LogViewer';
import { ExecTerminal } from './ExecTerminal';
import { PortForwardPanel } from './PortForwardPanel';

vi.hoisted(() => {
  // jsdom has no canvas (xterm.js probes one when it loads, then measures with the DOM)
  HTMLCanvasElement.prototype.getContext = (() => null) as never;
  // nor matchMedia, which xterm.js uses to follow the device pixel ratio
  window.matchMedia ??= ((q: string) => ({
    matches: false,
    media: q,
    addListener() {},
    removeListener() {},
    addEventListener() {},
    removeEventListener() {},
  })) as never;
});
afterEach(cleanup);

const record = (stream: 'stdout' | 'stderr', text: string) => `2026-11-23T10:00:00.000000000Z ${stream} F ${text}\n`;

describe('log viewer', () => {
  it('shows the tail, follows new lines, tells stderr apart, searches and filters', async () => {
    const r = await renderWithEngine(<Later />);
    await r.fakes.loadImage('podscope.test/busybox:1');
    const logDir = join(r.fakes.dir, 'logs');
    const { id: podId } = await r.engine.run({
      config: { metadata: { name: 'p', namespace: 'default', uid: 'u' }, log_directory: logDir },
    });
    const { id } = await r.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'c' }, image: { image: 'podscope.test/busybox:1' }, log_path: 'c_0.log' },
    });
    await mkdir(logDir, { recursive: true });
    await writeFile(join(logDir, 'c_0.log'), record('stdout', 'booting') + record('stderr', 'warning: no config'));
    const { router } = r;
    act(() => later.show!(<LogViewer containerId={id} name="c" />));
    const log = await screen.findByRole('log', { name: 'Log lines' });
    await within(log).findByText('booting');
    const err = within(log).getByText('warning: no config').closest('.log-line')!;
    expect(err.getAttribute('data-stream')).toBe('stderr');

    await appendFile(join(logDir, 'c_0.log'), record('stdout', 'request GET /'));
    await within(log).findByText('request GET /');

    fireEvent.change(screen.getByLabelText('Search the log'), { target: { value: 'get' } });
    await waitFor(() => expect(within(log).queryByText('booting')).toBeNull());
    expect(log.querySelector('mark')?.textContent).toBe('GET');
    fireEvent.change(screen.getByLabelText('Search the log'), { target: { value: '' } });
    fireEvent.click(screen.getByRole('checkbox', { name: /stderr/ }));
    await waitFor(() => expect(within(log).queryByText('warning: no config')).toBeNull());
    expect(within(log).getByText('booting')).toBeTruthy();

    cleanup();
    await waitFor(() => expect(router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 }));
  });
});

describe('terminal', () => {
  it('sends keys, shows the output, and the fitted size reaches the process; unmounting ends it', async () => {
    const toy = new ToyStreaming();
    let term: Terminal | undefined;
    const { router } = await renderWithEngine(<ExecTerminal containerId="c1" onTerminal={(t) => (term = t)} />, { streaming: toy });
    await waitFor(() => expect(toy.running).toBe(1));
    expect(toy.execs[0]).toEqual(['/bin/sh']);
    await waitFor(() => expect(screen.getByTestId('terminal-state').textContent).toContain('connected'));
    // the size the terminal had when it opened reached the process as its first resize
    expect(toy.resizes[0]).toEqual({ width: term!.cols, height: term!.rows });
    const screenText = () => {
      const b = term!.buffer.active;
      return Array.from({ length: b.length }, (_, i) => b.getLine(i)?.translateToString(true) ?? '').join('\n');
    };
    // typed as a user would (xterm's input path: onData → stream.write)
    act(() => term!.input('echo hi\r', true));
    await waitFor(() => expect(screenText()).toMatch(/^hi$/m));
    // a new size (what fit() does when the box changes) goes to the process: `stty size` answers with it
    act(() => term!.resize(97, 31));
    await waitFor(() => expect(toy.resizes.at(-1)).toEqual({ width: 97, height: 31 }));
    act(() => term!.input('stty size\r', true));
    await waitFor(() => expect(screenText()).toMatch(/^31 97$/m));
    cleanup();
    await waitFor(() => expect(toy.running).toBe(0));
    expect(router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 });
  });
});

describe('attach', () => {
  it('attaches to the container’s own process when it keeps stdin open; leaving detaches', async () => {
    const toy = new ToyStreaming();
    let term: Terminal | undefined;
    const attach = vi.spyOn(toy, 'attach');
    await renderWithEngine(<ExecTerminal containerId="c1" attach={{ tty: false }} onTerminal={(t) => (term = t)} />, { streaming: toy });
    await waitFor(() => expect(toy.running).toBe(1));
    fireEvent.click(screen.getByRole('tab', { name: 'Attach' }));
    await waitFor(() => expect(attach).toHaveBeenCalledTimes(1));
    expect(attach.mock.calls[0]![0]).toMatchObject({ containerId: 'c1', tty: false });
    await waitFor(() => expect(toy.running).toBe(1)); // the exec ended, the attach holds
    act(() => term!.input('echo attached\r', true));
    const text = () => {
      const b = term!.buffer.active;
      return Array.from({ length: b.length }, (_, i) => b.getLine(i)?.translateToString(true) ?? '').join('\n');
    };
    // no tty: nothing echoes the typed line; the prompt is followed by the output
    await waitFor(() => expect(text()).toMatch(/^\$ attached$/m));
    cleanup();
    await waitFor(() => expect(toy.running).toBe(0));
  });
});

describe('forward port', () => {
  it('opens a loopback port that reaches the pod side, shows it with copy and close, and close frees it', async () => {
    const toy = new ToyStreaming();
    const upstream = createServer((s) => s.end('hello from the pod\n'));
    await new Promise<void>((res) => upstream.listen(0, '127.0.0.1', res));
    onTestFinished(() => new Promise<void>((res) => upstream.close(() => res())));
    toy.targets.set(80, { host: '127.0.0.1', port: (upstream.address() as AddressInfo).port });
    const { router } = await renderWithEngine(<PortForwardPanel podId="pod1" />, { streaming: toy });
    fireEvent.change(screen.getByLabelText('Pod port'), { target: { value: '80' } });
    fireEvent.click(screen.getByRole('button', { name: 'Forward port' }));
    const address = (await screen.findByTestId('forward-address')).textContent!;
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    const port = Number(address.split(':')[1]);
    expect(within(screen.getByTestId('forward-row')).getByRole('button', { name: 'Copy' })).toBeTruthy();
    expect(await readAll(port)).toBe('hello from the pod\n');
    fireEvent.click(within(screen.getByTestId('forward-row')).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByTestId('forward-row')).toBeNull());
    expect(await refused(port)).toBe(true);
    expect(router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 });
  });
});

describe('a forward ends with its pod', () => {
  it('says why where the row was when the pod is removed, and the local port refuses', async () => {
    const toy = new ToyStreaming();
    const upstream = createServer((s) => s.end('hello from the pod\n'));
    await new Promise<void>((res) => upstream.listen(0, '127.0.0.1', res));
    onTestFinished(() => new Promise<void>((res) => upstream.close(() => res())));
    toy.targets.set(80, { host: '127.0.0.1', port: (upstream.address() as AddressInfo).port });
    const r = await renderWithEngine(<Later />, { streaming: toy });
    const { id: podId } = await r.engine.run({ config: { metadata: { name: 'fwd-pod', namespace: 'default', uid: 'u-fwd' } } });
    act(() => later.show!(<PortForwardPanel podId={podId} />));
    fireEvent.change(screen.getByLabelText('Pod port'), { target: { value: '80' } });
    fireEvent.click(screen.getByRole('button', { name: 'Forward port' }));
    const address = (await screen.findByTestId('forward-address')).textContent!;
    const port = Number(address.split(':')[1]);
    expect(await readAll(port)).toBe('hello from the pod\n');
    await act(() => r.engine.remove(podId));
    expect((await screen.findByTestId('forward-ended')).textContent).toBe(
      `The forward of pod port 80 (${address}) ended: pod fwd-pod was removed`,
    );
    await waitFor(() => expect(screen.queryByTestId('forward-row')).toBeNull());
    expect(await refused(port)).toBe(true);
    expect(r.router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 });
  });
});

const later: { show?: (ui: React.ReactElement) => void } = {};
/** mounts its content once the test has set the engine up (inside the providers renderWithEngine makes) */
function Later() {
  const [ui, show] = useState<React.ReactElement>();
  later.show = show;
  return ui ?? null;
}

function readAll(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = connect(port, '127.0.0.1');
    s.on('data', (d) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}
