/**
 * Browser mode's front door and the stream sessions: output goes only to the socket that opened the session, and a
 * socket that closes (tab closed, reloaded) ends its sessions and forwards. The real HTTP/WS host and the real
 * engine over fakes; streaming is the tiny in-test ContainerStreaming (testkit/fakes/toy-streaming.ts),
 * because the fake container runtime cannot exec.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { assembleAppCore } from '../../electron/core/app-core';
import { startBrowserHost } from '../../electron/host/browser-host';
import { createTestEngine } from '../../testkit/fakes/test-engine';
import { ToyStreaming } from '../../testkit/fakes/toy-streaming';
import type { Reply, ServerFrame } from '../../shared/ipc/wire';

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'psu-host-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>Podscope</title>');
  const fakes = await createTestEngine();
  onTestFinished(() => fakes.close());
  const toy = new ToyStreaming();
  Object.defineProperty(fakes.engine, 'streaming', { value: toy });
  const host = await startBrowserHost({ core: assembleAppCore(fakes.engine), rendererDir: dir });
  onTestFinished(() => host.close());
  return { host, toy };
}

interface Conn {
  ws: WebSocket;
  frames: ServerFrame[];
  call(channel: string, payload: unknown): Promise<Reply>;
}

async function open(port: number, token: string): Promise<Conn> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ipc?token=${encodeURIComponent(token)}`, {
    headers: { Origin: `http://127.0.0.1:${port}` },
  });
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const frames: ServerFrame[] = [];
  const waiting = new Map<number, (r: Reply) => void>();
  ws.on('message', (d) => {
    const f = JSON.parse(String(d)) as ServerFrame;
    frames.push(f);
    if (f.t === 'res') waiting.get(f.id)?.(f.reply);
  });
  let id = 0;
  return {
    ws,
    frames,
    call: (channel, payload) =>
      new Promise((resolve) => {
        const n = ++id;
        waiting.set(n, resolve);
        ws.send(JSON.stringify({ t: 'req', id: n, channel, payload }));
      }),
  };
}

const until = async (check: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('browser host · stream sessions', () => {
  it('sends a session’s output to its own socket only, and ends its sessions and forwards when that socket closes', async () => {
    const { host, toy } = await setup();
    const a = await open(host.port, host.token);
    const b = await open(host.port, host.token);
    const exec = await a.call('stream.exec', { containerId: 'c1', cmd: ['sh'], tty: false });
    expect(exec.ok).toBe(true);
    const sessionId = (exec as { result: { sessionId: string } }).result.sessionId;
    const fwd = await a.call('portForward.open', { podSandboxId: 'p1', port: 80 });
    expect(fwd.ok).toBe(true);
    const hostPort = (fwd as { result: { hostPort: number } }).result.hostPort;
    await a.call('stream.write', { sessionId, data: 'echo hi\n' });
    const dataOf = (c: Conn) =>
      c.frames
        .filter((f) => f.t === 'event' && f.event.kind === 'stream.data')
        .map((f) => Buffer.from((f as { event: { data: string } }).event.data, 'base64').toString())
        .join('');
    await until(() => dataOf(a).includes('hi\n'), 'the output on socket a');
    expect(dataOf(b)).toBe('');
    // b cannot touch a's session
    const foreign = await b.call('stream.close', { sessionId });
    expect(foreign.ok).toBe(true); // close is idempotent and silent for unknown ids…
    expect(toy.running).toBe(1); // …and did not end a's shell

    a.ws.close();
    await until(() => toy.running === 0, 'the shell to end');
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          const s = connect(hostPort, '127.0.0.1');
          s.once('connect', () => (s.destroy(), resolve(false)));
          s.once('error', () => resolve(true));
        }),
      'the forwarded port to close',
    );
    b.ws.close();
  });
});
