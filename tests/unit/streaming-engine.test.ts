/**
 * engine.streaming over the touch-point fakes (createTestEngine): the checks made before a session starts (as
 * containerd's exec/attach/port-forward), what reaches the runtime (the container's process spec with args and
 * terminal replaced, the container's own tty, stdin dropped for a container without one), and the scriptable fake
 * that UI/IPC/CRI tests stream against without root.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Duplex, PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResizeSource, TerminalSize } from '../../electron/engine/containers/streaming';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import type { ContainerConfigInput } from '../../shared/domain/container';

const IMAGE = 'podscope.test/busybox:1';
let t: TestEngine;
let podId: string;

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

beforeEach(async () => {
  t = await createTestEngine({ tmpPrefix: 'pss1-unit-stream-' });
  await t.loadImage(IMAGE, {
    config: { Cmd: ['sh'], Env: ['PATH=/bin', 'A=image'], WorkingDir: '/srv' },
    layers: [{ 'etc/passwd': 'root:x:0:0::/:/bin/sh\n' }],
  });
  ({ id: podId } = await t.engine.run({
    config: { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, hostname: 'p', log_directory: join(t.dir, 'logs') },
  }));
});

afterEach(() => t.close());

async function running(name: string, extra: Partial<ContainerConfigInput> = {}): Promise<string> {
  const { id } = await t.engine.createContainer({
    podSandboxId: podId,
    config: { metadata: { name }, image: { image: IMAGE }, command: ['sleep', '1'], log_path: `${name}.log`, ...extra },
  });
  await t.engine.startContainer(id);
  return id;
}

describe('exec', () => {
  it("runs the container's process (env, cwd, user) with the given args and terminal", async () => {
    const id = await running('c', { envs: [{ key: 'B', value: 'cfg' }] });
    const out = new Sink();
    const r = await t.engine.streaming.exec({
      containerId: id.slice(0, 8),
      cmd: ['echo', 'hi'],
      stdin: null,
      stdout: out,
      stderr: null,
      tty: true,
    });
    expect(r).toEqual({ exitCode: 0 });
    expect(out.text).toBe('hi\n');
    const proc = t.containerRuntime.streamExecs[0]!.process as { args: string[]; terminal: boolean; env: string[]; cwd: string };
    expect(proc.args).toEqual(['echo', 'hi']);
    expect(proc.terminal).toBe(true);
    expect(proc.cwd).toBe('/srv');
    expect(proc.env).toEqual(expect.arrayContaining(['A=image', 'B=cfg']));
  });

  it('the fake echoes stdin and returns the scripted exit code; a resize sent before the session started is not lost', async () => {
    const id = await running('c');
    t.containerRuntime.execStreamExitCode = 3;
    const stdin = new PassThrough();
    const out = new Sink();
    const listeners = new Set<(s: TerminalSize) => void>();
    const resize: ResizeSource = { subscribe: (l) => (listeners.add(l), () => void listeners.delete(l)) };
    const run = t.engine.streaming.exec({ containerId: id, cmd: ['cat'], stdin, stdout: out, stderr: null, tty: true, resize });
    for (const l of listeners) l({ width: 80, height: 24 });
    stdin.end('typed\n');
    expect(await run).toEqual({ exitCode: 3 });
    expect(out.text).toBe('typed\n');
    expect(t.containerRuntime.streamExecs[0]!.resizes).toEqual([{ width: 80, height: 24 }]);
    // the engine let go of the source when the session ended
    expect(listeners.size).toBe(0);
  });

  it('refuses before it starts: empty cmd, unknown id, a container that is not running', async () => {
    const io = { stdin: null, stdout: null, stderr: null, tty: false };
    await expect(t.engine.streaming.exec({ containerId: 'nope', cmd: ['true'], ...io })).rejects.toMatchObject({ code: 'NotFound' });
    const id = await running('c');
    await expect(t.engine.streaming.exec({ containerId: id, cmd: [], ...io })).rejects.toMatchObject({ code: 'InvalidArgument' });
    const { id: created } = await t.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'idle' }, image: { image: IMAGE }, log_path: 'idle.log' },
    });
    await expect(t.engine.streaming.exec({ containerId: created, cmd: ['true'], ...io })).rejects.toMatchObject({
      code: 'FailedPrecondition',
      message: expect.stringContaining(created),
    });
    t.containerRuntime.exit(id, 0);
    await expect(t.engine.streaming.exec({ containerId: id, cmd: ['true'], ...io })).rejects.toMatchObject({ code: 'FailedPrecondition' });
    expect(t.containerRuntime.streamExecs).toHaveLength(0);
  });

  it('an abort ends the session with Canceled', async () => {
    const id = await running('c');
    const ac = new AbortController();
    const run = t.engine.streaming.exec({
      containerId: id,
      cmd: ['cat'],
      stdin: new PassThrough(),
      stdout: null,
      stderr: null,
      tty: false,
      signal: ac.signal,
    });
    await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await expect(run).rejects.toMatchObject({ code: 'Canceled' });
  });
});

describe('tty containers', () => {
  it('CreateContainer accepts tty and the spec asks runc for a terminal (Attach reaches it)', async () => {
    const id = await running('t', { tty: true, stdin: true });
    const spec = t.containerRuntime.containers.get(id)!.spec as { process: { terminal: boolean } };
    expect(spec.process.terminal).toBe(true);
    expect(t.containerRuntime.containers.get(id)!.stdio).toMatchObject({ tty: true, stdin: true, stdinOnce: false });
  });
});

describe('attach', () => {
  it("uses the container's tty, not the request's; input reaches a container with stdin; the session ends with the container", async () => {
    const id = await running('c', { stdin: true, tty: true });
    const stdin = new PassThrough();
    const out = new Sink();
    const session = t.engine.streaming.attach({ containerId: id, stdin, stdout: out, stderr: new Sink(), tty: false });
    stdin.write('ls\n');
    await new Promise((r) => setTimeout(r, 5));
    expect(out.text).toBe('ls\n');
    expect(t.containerRuntime.attaches[0]!.tty).toBe(true);
    t.containerRuntime.exit(id, 0);
    await session;
  });

  it('drops input for a container created without stdin (containerd ignores it) and still streams', async () => {
    const id = await running('c');
    const stdin = new PassThrough();
    const out = new Sink();
    const ac = new AbortController();
    const session = t.engine.streaming.attach({ containerId: id, stdin, stdout: out, stderr: null, tty: false, signal: ac.signal });
    stdin.write('ignored\n');
    await new Promise((r) => setTimeout(r, 5));
    expect(out.text).toBe('');
    ac.abort();
    await session;
  });

  it('unknown id: NotFound; not running: FailedPrecondition', async () => {
    const io = { stdin: null, stdout: null, stderr: null, tty: false };
    await expect(t.engine.streaming.attach({ containerId: 'nope', ...io })).rejects.toMatchObject({ code: 'NotFound' });
    const id = await running('c');
    t.containerRuntime.exit(id, 1);
    await expect(t.engine.streaming.attach({ containerId: id, ...io })).rejects.toMatchObject({ code: 'FailedPrecondition' });
  });
});

describe('port-forward', () => {
  it("dials in the pod's netns; the fake is an echo server; a closed port is Unavailable", async () => {
    // the maker's side of the connection: it reads what the client sent and writes what goes back
    const fromClient = new PassThrough();
    const toClient = new PassThrough();
    const stream = Duplex.from({ readable: fromClient, writable: toClient });
    const back: Buffer[] = [];
    toClient.on('data', (b: Buffer) => back.push(b));
    const fwd = t.engine.streaming.portForward({ sandboxId: podId.slice(0, 6), port: 80, stream });
    fromClient.end('GET / HTTP/1.0\r\n\r\n');
    await fwd;
    expect(Buffer.concat(back).toString()).toBe('GET / HTTP/1.0\r\n\r\n');
    const st = await t.engine.status(podId);
    expect(t.containerRuntime.dials).toEqual([{ netnsPath: st.netnsPath, port: 80 }]);
    t.containerRuntime.closedPorts.add(81);
    await expect(t.engine.streaming.portForward({ sandboxId: podId, port: 81, stream: new PassThrough() })).rejects.toMatchObject({
      code: 'Unavailable',
    });
  });

  it('refuses a bad port, an unknown pod and a stopped pod', async () => {
    const s = () => new PassThrough();
    await expect(t.engine.streaming.portForward({ sandboxId: podId, port: 0, stream: s() })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    await expect(t.engine.streaming.portForward({ sandboxId: podId, port: 70000, stream: s() })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    await expect(t.engine.streaming.portForward({ sandboxId: 'f'.repeat(64), port: 80, stream: s() })).rejects.toMatchObject({
      code: 'NotFound',
    });
    await t.engine.stop(podId);
    await expect(t.engine.streaming.portForward({ sandboxId: podId, port: 80, stream: s() })).rejects.toMatchObject({
      code: 'FailedPrecondition',
    });
    expect(t.containerRuntime.dials).toHaveLength(0);
  });
});

describe('logs', () => {
  it("reads the container's CRI log; a container without a log path is FailedPrecondition", async () => {
    const id = await running('c');
    const st = await t.engine.containerStatus(id);
    await writeFile(st.logPath, '2026-11-23T10:00:00.000000001Z stdout F hello\n');
    const lines: string[] = [];
    for await (const e of await t.engine.containerLogs(id)) lines.push(e.text);
    expect(lines).toEqual(['hello']);
    const { id: quiet } = await t.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'quiet' }, image: { image: IMAGE } },
    });
    await expect(t.engine.containerLogs(quiet)).rejects.toMatchObject({ code: 'FailedPrecondition' });
  });
});
