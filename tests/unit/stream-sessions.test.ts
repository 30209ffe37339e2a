/**
 * The IPC router's stream sessions (exec, attach, log follow, port-forward) over the REAL engine and endpoint
 * registry. Streaming itself comes from a tiny in-test ContainerStreaming (testkit/fakes/toy-streaming.ts)
 * at the interface boundary, because the fake container runtime cannot exec; the engine's own streaming is covered
 * by its tests and by the e2e specs. What is asserted here is the router's part: ownership, flow control, clean-up
 * when a window or socket goes away, and the log file reading (real files in a temp dir).
 */
import { appendFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createRouter } from '../../electron/ipc/router';
import type { SenderInfo } from '../../electron/ipc/sender';
import { createTestEngine } from '../../testkit/fakes/test-engine';
import { ToyStreaming } from '../../testkit/fakes/toy-streaming';
import { createClient, type Transport } from '../../shared/ipc/client';
import type { PushedEvent } from '../../shared/ipc/events';
import { STREAM_CHUNK_BYTES, STREAM_WINDOW_BYTES } from '../../shared/domain/streams';

async function setup(opts: { streaming?: boolean } = {}) {
  const fakes = await createTestEngine();
  onTestFinished(() => fakes.close());
  const toy = new ToyStreaming();
  // the real engine over fakes streams too; the toy here is the OS boundary the session tests script (false: none at all)
  const endpoints = createEndpointRegistry({ local: fakes.engine, localStreaming: () => (opts.streaming === false ? undefined : toy) });
  const router = createRouter({ engine: fakes.engine, endpoints, isTrustedSender: () => true, logPollMs: 10 });
  onTestFinished(() => router.dispose());
  /** one client per connection id, with the events the front door would deliver to it */
  const connection = (connectionId: string) => {
    const sender: SenderInfo = { transport: 'websocket', url: 'http://127.0.0.1', authenticated: true, connectionId };
    const events: PushedEvent[] = [];
    const listeners = new Set<(e: PushedEvent) => void>();
    router.subscribe((e, target) => {
      if (target !== undefined && target !== connectionId) return;
      events.push(e);
      for (const l of listeners) l(e);
    });
    const transport: Transport = {
      kind: 'memory',
      invoke: (channel, payload) => router.handle(channel, payload, sender),
      onEvent: (l) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    return { client: createClient(transport), events, sender };
  };
  return { fakes, toy, router, connection };
}

const output = (events: PushedEvent[], sessionId: string) =>
  events
    .filter((e): e is Extract<PushedEvent, { kind: 'stream.data' }> => e.kind === 'stream.data' && e.sessionId === sessionId)
    .map((e) => Buffer.from(e.data, 'base64').toString('utf8'))
    .join('');
const exitOf = (events: PushedEvent[], sessionId: string) =>
  events.find((e): e is Extract<PushedEvent, { kind: 'stream.exit' }> => e.kind === 'stream.exit' && e.sessionId === sessionId);

async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** a running container "app" in a ready pod "p" of the engine over fakes */
async function runningContainer(fakes: Awaited<ReturnType<typeof createTestEngine>>): Promise<string> {
  const { id: podId } = await fakes.engine.run({ config: { metadata: { name: 'p', namespace: 'default', uid: 'u' } } });
  await fakes.loadImage('podscope.test/busybox:1', { config: { Cmd: ['sh'] } });
  const { id: containerId } = await fakes.engine.createContainer({
    podSandboxId: podId,
    config: { metadata: { name: 'app' }, image: { image: 'podscope.test/busybox:1' } },
  });
  await fakes.engine.startContainer(containerId);
  return containerId;
}

describe('stream sessions over IPC', () => {
  it('exec: stdin in, output out as events for that session only, resize reaches the process, exit code comes back', async () => {
    const { connection, toy } = await setup();
    const a = connection('win-a');
    const b = connection('win-b');
    const { sessionId } = await a.client.call('stream.exec', { containerId: 'c1', cmd: ['sh'], tty: true, size: { cols: 100, rows: 30 } });
    await a.client.call('stream.write', { sessionId, data: 'echo hi\r' });
    await until(() => output(a.events, sessionId).includes('hi\r\n'), 'the echo');
    await a.client.call('stream.resize', { sessionId, size: { cols: 132, rows: 43 } });
    await a.client.call('stream.write', { sessionId, data: Buffer.from('stty size\r').toString('base64'), encoding: 'base64' });
    await until(() => output(a.events, sessionId).includes('43 132'), 'stty size');
    expect(toy.resizes).toEqual([
      { width: 100, height: 30 },
      { width: 132, height: 43 },
    ]);
    // another window neither sees the output nor can touch the session
    expect(b.events.some((e) => e.kind === 'stream.data')).toBe(false);
    await expect(b.client.call('stream.write', { sessionId, data: 'exit 9\r' })).rejects.toMatchObject({ code: 'NotFound' });
    await a.client.call('stream.write', { sessionId, data: 'exit 3\r' });
    await until(() => !!exitOf(a.events, sessionId), 'the exit event');
    expect(exitOf(a.events, sessionId)).toMatchObject({ exitCode: 3 });
    expect(toy.running).toBe(0);
  });

  it('flow control: output stops at the window until the renderer acknowledges it, chunks are capped', async () => {
    const { connection, toy, router } = await setup();
    const a = connection('win-a');
    const total = STREAM_WINDOW_BYTES * 4;
    const { sessionId } = await a.client.call('stream.exec', {
      containerId: 'c1',
      cmd: ['flood', String(total)],
      tty: false,
      stdin: false,
    });
    const sent = () =>
      a.events.filter((e) => e.kind === 'stream.data').reduce((n, e) => n + Buffer.from((e as { data: string }).data, 'base64').length, 0);
    await until(() => sent() > STREAM_WINDOW_BYTES, 'the first window');
    // the process is blocked: nothing more is produced however long we wait for it
    const before = toy.flooded;
    await new Promise((r) => setTimeout(r, 100));
    expect(toy.flooded).toBe(before);
    expect(sent()).toBeLessThan(STREAM_WINDOW_BYTES + 4 * 16 * 1024 + 64 * 1024);
    for (const e of a.events)
      if (e.kind === 'stream.data') expect(Buffer.from(e.data, 'base64').length).toBeLessThanOrEqual(STREAM_CHUNK_BYTES);
    // acknowledging everything sent lets it go on, to the end
    let acked = 0;
    while (!exitOf(a.events, sessionId)) {
      const s = sent();
      if (s > acked) {
        await a.client.call('stream.ack', { sessionId, bytes: s - acked });
        acked = s;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(sent()).toBe(total);
    expect(exitOf(a.events, sessionId)).toMatchObject({ exitCode: 0 });
    expect(router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 });
  });

  it('a window that goes away ends its sessions and closes its forwarded ports; other windows keep theirs', async () => {
    const { connection, toy, router } = await setup();
    const a = connection('win-a');
    const b = connection('win-b');
    const target = await httpServer();
    toy.targets.set(80, target);
    const s1 = await a.client.call('stream.exec', { containerId: 'c1', cmd: ['sh'] });
    const f1 = await a.client.call('portForward.open', { podSandboxId: 'pod1', port: 80 });
    const s2 = await b.client.call('stream.exec', { containerId: 'c1', cmd: ['sh'] });
    expect(await a.client.call('portForward.list', {})).toHaveLength(1);
    expect(await b.client.call('portForward.list', {})).toHaveLength(0);
    // an open connection through the forward, to see it torn down too
    const sock = connect(f1.hostPort, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    await until(() => toy.running === 3, 'three running (two shells, one forwarded connection)');
    const closed = new Promise((r) => sock.once('close', r));

    await router.closeConnection('win-a');
    await closed;
    expect(exitOf(a.events, s1.sessionId)).toBeTruthy();
    expect(exitOf(b.events, s2.sessionId)).toBeUndefined();
    expect(await portRefused(f1.hostPort)).toBe(true);
    await until(() => toy.running === 1, 'only window b’s shell left');
    expect(router.sessions.counts('win-a')).toEqual({ sessions: 0, forwards: 0 });
    expect(router.sessions.counts('win-b')).toEqual({ sessions: 1, forwards: 0 });
    await b.client.call('stream.close', { sessionId: s2.sessionId });
    expect(toy.running).toBe(0);
  });

  it('port-forward: an HTTP request through the loopback port reaches the pod side; close frees the port', async () => {
    const { connection, toy, router } = await setup();
    const a = connection('win-a');
    const target = await httpServer();
    toy.targets.set(8080, target);
    const f = await a.client.call('portForward.open', { podSandboxId: 'pod1', port: 8080 });
    expect(f).toMatchObject({ hostAddress: '127.0.0.1', port: 8080 });
    expect(f.hostPort).toBeGreaterThan(0);
    expect(await get(f.hostPort, '/hello')).toBe('you asked for /hello');
    expect((await a.client.call('portForward.list', {}))[0]!.connections).toBe(1);
    await a.client.call('portForward.close', { id: f.id });
    expect(await portRefused(f.hostPort)).toBe(true);
    expect(router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 });
  });

  it('a forward ends with its pod: stopping says so (after a moment, in case a removal follows), removing says so at once; the port refuses', async () => {
    const { connection, toy, fakes } = await setup();
    const a = connection('win-a');
    toy.targets.set(8080, await httpServer());
    const closedEvent = (id: string) =>
      a.events.find((e): e is Extract<PushedEvent, { kind: 'portForward.closed' }> => e.kind === 'portForward.closed' && e.id === id);
    const { id: removed } = await fakes.engine.run({ config: { metadata: { name: 'gone', namespace: 'default', uid: 'u1' } } });
    const f1 = await a.client.call('portForward.open', { podSandboxId: removed, port: 8080 });
    expect(await get(f1.hostPort, '/x')).toBe('you asked for /x');
    await fakes.engine.remove(removed);
    await until(() => closedEvent(f1.id) !== undefined, 'the forward to the removed pod to close');
    expect(closedEvent(f1.id)!.reason).toBe('pod gone was removed');
    expect(await portRefused(f1.hostPort)).toBe(true);

    const { id: stopped } = await fakes.engine.run({ config: { metadata: { name: 'halted', namespace: 'default', uid: 'u2' } } });
    const f2 = await a.client.call('portForward.open', { podSandboxId: stopped, port: 8080 });
    await fakes.engine.stop(stopped);
    await until(() => closedEvent(f2.id) !== undefined, 'the forward to the stopped pod to close');
    expect(closedEvent(f2.id)!.reason).toBe('pod halted was stopped');
    expect(await portRefused(f2.hostPort)).toBe(true);
    expect(await a.client.call('portForward.list', {})).toEqual([]);
  });

  it('an exec session ends with its container, saying so', async () => {
    const { connection, fakes } = await setup();
    const a = connection('win-a');
    const containerId = await runningContainer(fakes);
    const { sessionId } = await a.client.call('stream.exec', { containerId, cmd: ['sh'] });
    await new Promise((r) => setTimeout(r, 50)); // the session learns its container's name
    await fakes.engine.removeContainer(containerId);
    await until(() => exitOf(a.events, sessionId) !== undefined, 'the session to end');
    expect(exitOf(a.events, sessionId)!.reason).toMatch(/^container app (exited|was removed)$/);
  });

  it('an exec killed before its container is seen to go still says why, once the event arrives', async () => {
    const { connection, fakes } = await setup();
    const a = connection('win-a');
    const containerId = await runningContainer(fakes);
    // exit 137 at once, while the container still reads as running; the removal (and its event) comes 150 ms later
    const { sessionId } = await a.client.call('stream.exec', { containerId, cmd: ['killed'] });
    await new Promise((r) => setTimeout(r, 150));
    expect(exitOf(a.events, sessionId)).toBeUndefined();
    await fakes.engine.removeContainer(containerId);
    await until(() => exitOf(a.events, sessionId) !== undefined, 'the session to end');
    expect(exitOf(a.events, sessionId)).toMatchObject({
      exitCode: 137,
      reason: expect.stringMatching(/^container app (exited|was removed)$/),
    });
  });

  // the toy's 'too-late' and 'lost' end with an error and no exit code while the container still reads as running
  it.each([
    ['reached its container as it stopped', 'too-late', 'stopped container'],
    ['ended with no exit status the runtime could report', 'lost', 'no exit status'],
  ])('an exec that %s says why, once the event arrives', async (_what, cmd, message) => {
    const { connection, fakes } = await setup();
    const a = connection('win-a');
    const containerId = await runningContainer(fakes);
    const { sessionId } = await a.client.call('stream.exec', { containerId, cmd: [cmd] });
    await new Promise((r) => setTimeout(r, 150));
    expect(exitOf(a.events, sessionId)).toBeUndefined();
    await fakes.engine.removeContainer(containerId);
    await until(() => exitOf(a.events, sessionId) !== undefined, 'the session to end');
    expect(exitOf(a.events, sessionId)).toMatchObject({
      error: { message: expect.stringContaining(message) },
      reason: expect.stringMatching(/^container app (exited|was removed)$/),
    });
  });

  it('an exec that exits by itself ends at once, with no reason (its container still runs)', async () => {
    const { connection, fakes } = await setup();
    const a = connection('win-a');
    const containerId = await runningContainer(fakes);
    const { sessionId } = await a.client.call('stream.exec', { containerId, cmd: ['false'] });
    await until(() => exitOf(a.events, sessionId) !== undefined, 'the session to end');
    expect(exitOf(a.events, sessionId)).toMatchObject({ exitCode: 1 });
    expect(exitOf(a.events, sessionId)!.reason).toBeUndefined();
  });

  it('says "this endpoint does not support exec" (and port-forward) when the endpoint has no streaming', async () => {
    const { connection } = await setup({ streaming: false });
    const a = connection('win-a');
    await expect(a.client.call('stream.exec', { containerId: 'c1', cmd: ['sh'] })).rejects.toMatchObject({
      code: 'Unimplemented',
      message: expect.stringContaining('this endpoint does not support exec'),
    });
    await expect(a.client.call('portForward.open', { podSandboxId: 'p', port: 80 })).rejects.toMatchObject({
      message: expect.stringContaining('does not support port-forward'),
    });
    const eps = await a.client.call('endpoints.list', {});
    expect(eps[0]!.capabilities.streaming).toBe(false);
  });

  it('logs: tail, then new lines as they are written, partial records joined, across a rotation', async () => {
    const { connection, fakes, router } = await setup();
    const a = connection('win-a');
    await fakes.loadImage('podscope.test/busybox:1');
    const logDir = join(fakes.dir, 'logs');
    const { id: podId } = await fakes.engine.run({
      config: { metadata: { name: 'p', namespace: 'default', uid: 'u' }, log_directory: logDir },
    });
    const { id } = await fakes.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'c' }, image: { image: 'podscope.test/busybox:1' }, log_path: 'c_0.log' },
    });
    const path = join(logDir, 'c_0.log');
    await mkdir(logDir, { recursive: true });
    // what the log shim writes (the OS boundary here): records in the CRI format
    await writeFile(path, ['old 1', 'old 2', 'old 3'].map((t) => `2026-11-23T10:00:00.000000000Z stdout F ${t}`).join('\n') + '\n');
    const { sessionId, logPath } = await a.client.call('logs.follow', { containerId: id, tail: 2 });
    expect(logPath).toBe(path);
    const lines = () =>
      a.events.flatMap((e) => (e.kind === 'logs.lines' && e.sessionId === sessionId ? e.lines.map((l) => `${l.stream}:${l.text}`) : []));
    await until(() => lines().length === 2, 'the tail');
    expect(lines()).toEqual(['stdout:old 2', 'stdout:old 3']);
    await appendFile(path, '2026-11-23T10:00:01.000000000Z stderr P part one \n2026-11-23T10:00:01.000000000Z stderr F and two\n');
    await until(() => lines().length === 3, 'the new line');
    expect(lines()[2]).toBe('stderr:part one and two');
    // rotation: the file is renamed away and a new one started (what ReopenContainerLog follows)
    await appendFile(path, '2026-11-23T10:00:02.000000000Z stdout F last in old file\n');
    await rename(path, `${path}.1`);
    await writeFile(path, '2026-11-23T10:00:03.000000000Z stdout F first in new file\n');
    await until(() => lines().length === 5, 'lines across the rotation');
    expect(lines().slice(3)).toEqual(['stdout:last in old file', 'stdout:first in new file']);
    await a.client.call('stream.close', { sessionId });
    expect(router.sessions.counts()).toEqual({ sessions: 0, forwards: 0 });
  });

  it('logs: a container without a log path is a clear FailedPrecondition', async () => {
    const { connection, fakes } = await setup();
    const a = connection('win-a');
    await fakes.loadImage('podscope.test/busybox:1');
    const { id: podId } = await fakes.engine.run({ config: { metadata: { name: 'p', namespace: 'default', uid: 'u' } } });
    const { id } = await fakes.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'c' }, image: { image: 'podscope.test/busybox:1' } },
    });
    await expect(a.client.call('logs.follow', { containerId: id })).rejects.toMatchObject({
      code: 'FailedPrecondition',
      message: expect.stringContaining('no log file'),
    });
  });
});

async function httpServer(): Promise<{ host: string; port: number }> {
  const server: Server = createServer((sock) => {
    sock.once('data', (d) => {
      const path = d.toString().split(' ')[1];
      const body = `you asked for ${path}`;
      sock.end(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}

function portRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}
