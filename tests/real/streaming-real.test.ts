/**
 * Streaming with real parts: exec (pipes and a terminal), attach, port-forward and log following against busybox
 * containers under runc in a real pod (netns, Debian's CNI plugins, runc pause). Needs root. Bridge and subnets from
 * the test kit's allocator (a lease), temp dirs /tmp/pss1-*. Everything is removed in afterAll, and the shared leak checker runs on the env's teardown.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex, PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResizeSource, TerminalSize } from '../../electron/engine/containers/streaming';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { ContainerConfigInput } from '../../shared/domain/container';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { LogEntry } from '../../shared/domain/cri-log';
import { hasCode } from '../../shared/domain/errors';
import { measureExecLatency } from '../../bench/exec-latency';
import { BUSYBOX_IMAGE, INDEX_HTML, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { engineFlagsFor } from '../../testkit/engine-flags';
import { podscope } from './helpers/podscope-cli';
import { processesMentioning } from '../../testkit/leak-check';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

class Resizer implements ResizeSource {
  private readonly listeners = new Set<(s: TerminalSize) => void>();
  subscribe(l: (s: TerminalSize) => void) {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }
  emit(s: TerminalSize) {
    for (const l of this.listeners) l(s);
  }
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

/** host pids whose argv is exactly `argv` */
function pidsWithArgv(argv: string[]): number[] {
  const want = argv.join('\0') + '\0';
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'latin1') === want) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

let env: RealEnv;
let engine: SandboxEngine;
let logDir: string;
let treeDir: string;
let podId: string;

beforeAll(async () => {
  env = await createRealEnv({ tag: 'pss1', tempPrefix: 'pss1-env-' });
  treeDir = await mkdtemp(join(tmpdir(), 'pss1-tree-'));
  await buildBusyboxTree(join(treeDir, 'busybox'));
  logDir = await mkdtemp(join(tmpdir(), 'pss1-logs-'));
  engine = await env.engine({}, { images: new LocalBusyboxStore(join(treeDir, 'busybox')) });
  ({ id: podId } = await engine.run({ config: pod('stream') }));
});

afterAll(async () => {
  // every session's process (runc exec, the script pty wrapper, the nsenter dialer) and every log shim is gone once
  // the pod is removed; the env's teardown then runs the shared leak checker (app containers, records, exec files)
  const netns = podId ? (await engine.status(podId).catch(() => undefined))?.netnsPath : undefined;
  // closed first: its background exit poll would otherwise save the record of a container the sweeper just removed
  await engine?.close().catch(() => undefined);
  if (podId) {
    const sweeper = await env.engine({}, { noLock: true });
    await sweeper.remove(podId).catch(() => undefined);
    await sweeper.close();
  }
  const needles = [env.dir, ...(netns ? [netns] : [])];
  const t0 = Date.now();
  let left = processesMentioning(needles);
  while (left.length > 0 && Date.now() - t0 < 5000) {
    await new Promise((r) => setTimeout(r, 50));
    left = processesMentioning(needles);
  }
  for (const p of left) process.kill(p.pid, 'SIGKILL');
  try {
    await env?.teardown();
  } finally {
    if (treeDir) await rm(treeDir, { recursive: true, force: true });
    if (logDir) await rm(logDir, { recursive: true, force: true });
  }
  expect(left).toEqual([]);
});

function pod(name: string): PodSandboxConfigInput {
  return {
    metadata: { name, namespace: 'podscope-s1', uid: `uid-${name}` },
    hostname: name,
    log_directory: join(logDir, name),
    linux: { security_context: { seccomp: { profile_type: 0 } } },
  };
}

let seq = 0;
async function startContainer(command: string[], extra: Partial<ContainerConfigInput> = {}): Promise<string> {
  const name = `c${seq++}`;
  const { id } = await engine.createContainer({
    podSandboxId: podId,
    config: {
      metadata: { name },
      image: { image: BUSYBOX_IMAGE },
      command,
      log_path: `${name}/0.log`,
      linux: { security_context: { seccomp: { profile_type: 0 } } },
      ...extra,
    },
  });
  await engine.startContainer(id);
  return id;
}

describe('exec with live streams', () => {
  let id: string;
  beforeAll(async () => {
    id = await startContainer(['sleep', '100000'], { working_dir: '/tmp', envs: [{ key: 'GREETING', value: 'from-spec' }] });
  });

  it('pipes stdin to the process (cat echoes it), keeps stderr apart and returns the exit code', async () => {
    const stdin = new PassThrough();
    const out = new Sink();
    const err = new Sink();
    const run = engine.streaming.exec({ containerId: id, cmd: ['cat'], stdin, stdout: out, stderr: err, tty: false });
    stdin.write('hello ');
    stdin.end('world\n');
    expect(await run).toEqual({ exitCode: 0 });
    expect(out.text).toBe('hello world\n');
    expect(err.text).toBe('');

    const out2 = new Sink();
    const err2 = new Sink();
    const r = await engine.streaming.exec({
      containerId: id.slice(0, 12),
      cmd: ['sh', '-c', 'echo to-out; echo to-err >&2; exit 3'],
      stdin: null,
      stdout: out2,
      stderr: err2,
      tty: false,
    });
    expect(r.exitCode).toBe(3);
    expect(out2.text).toBe('to-out\n');
    expect(err2.text).toBe('to-err\n');
  });

  it("runs with the container's env and working dir (its spec's process, args replaced)", async () => {
    const out = new Sink();
    await engine.streaming.exec({
      containerId: id,
      cmd: ['sh', '-c', 'pwd; echo $GREETING'],
      stdin: null,
      stdout: out,
      stderr: null,
      tty: false,
    });
    expect(out.text).toBe('/tmp\nfrom-spec\n');
  });

  it('reports a signal death as 128+N', async () => {
    const r = await engine.streaming.exec({
      containerId: id,
      cmd: ['sh', '-c', 'kill -9 $$'],
      stdin: null,
      stdout: null,
      stderr: null,
      tty: false,
    });
    expect(r.exitCode).toBe(137);
  });

  it('with a tty, the process has a terminal of its own (/dev/pts/N) and stdout carries it', async () => {
    const out = new Sink();
    const r = await engine.streaming.exec({ containerId: id, cmd: ['busybox', 'tty'], stdin: null, stdout: out, stderr: null, tty: true });
    expect(r.exitCode).toBe(0);
    expect(out.text).toMatch(/^\/dev\/pts\/\d+\r?\n$/);
  });

  it('with a tty, a resize reaches the process (stty size prints the size set)', async () => {
    const stdin = new PassThrough();
    const out = new Sink();
    const resize = new Resizer();
    const run = engine.streaming.exec({
      containerId: id,
      cmd: ['sh', '-c', 'while read x; do busybox stty size; done'],
      stdin,
      stdout: out,
      stderr: null,
      tty: true,
      resize,
    });
    resize.emit({ width: 77, height: 22 });
    await until('the first size', () => {
      stdin.write('\n');
      return /22 77/.test(out.text);
    });
    resize.emit({ width: 123, height: 45 });
    await until('the new size', () => {
      stdin.write('\n');
      return /45 123/.test(out.text);
    });
    stdin.write('\x04'); // ^D: EOF for read on the terminal
    expect((await run).exitCode).toBe(0);
  });

  for (const tty of [false, true]) {
    it(`an abort kills the exec'd process (${tty ? 'tty' : 'pipes'}): no process is left`, async () => {
      const marker = tty ? '31338' : '31337';
      const ac = new AbortController();
      const run = engine.streaming.exec({
        containerId: id,
        cmd: ['sleep', marker],
        stdin: null,
        stdout: null,
        stderr: null,
        tty,
        signal: ac.signal,
      });
      const [pid] = await until('the exec to start', () => {
        const p = pidsWithArgv(['sleep', marker]);
        return p.length ? p : undefined;
      });
      ac.abort();
      await expect(run).rejects.toSatisfy((e: unknown) => hasCode(e, 'Canceled'));
      await until('the process to be gone', () => pidsWithArgv(['sleep', marker]).length === 0 || undefined);
      expect(() => process.kill(pid!, 0)).toThrow();
    });
  }

  it('prints the echo exec round-trip latency (p50 of 20; a figure, not asserted)', async () => {
    const r = await measureExecLatency(engine.streaming, id, 20, (c, cmd) => engine.execSync(c, cmd, 10));
    console.log(
      `exec echo round trip: pipes p50 ${r.pipes.p50.toFixed(1)} ms p95 ${r.pipes.p95.toFixed(1)} ms; ` +
        `tty p50 ${r.tty.p50.toFixed(1)} ms p95 ${r.tty.p95.toFixed(1)} ms; ` +
        `ExecSync p50 ${r.execSync!.p50.toFixed(1)} ms (n=${r.pipes.n})`,
    );
    expect(r.pipes.n).toBe(20);
  });

  it('leaves no exec files in the runc root (process json, log, pid file, tty name)', () => {
    const root = join(env.options.runDir!, 'containers', 'runc');
    expect(readdirSync(root).filter((f) => f.startsWith('exec-'))).toEqual([]);
  });

  it('refuses before starting: NotFound for an unknown id, FailedPrecondition for a stopped container', async () => {
    const io = { stdin: null, stdout: null, stderr: null, tty: false };
    await expect(engine.streaming.exec({ containerId: 'f'.repeat(64), cmd: ['true'], ...io })).rejects.toSatisfy((e: unknown) =>
      hasCode(e, 'NotFound'),
    );
    const done = await startContainer(['true']);
    await until('the container to exit', async () =>
      (await engine.containerStatus(done)).state === 'CONTAINER_EXITED' ? true : undefined,
    );
    await expect(engine.streaming.exec({ containerId: done, cmd: ['true'], ...io })).rejects.toSatisfy(
      (e: unknown) => hasCode(e, 'FailedPrecondition') && (e as Error).message.includes(done),
    );
  });
});

describe('attach', () => {
  it('reaches a container created with stdin: a command written to its shell is answered', async () => {
    const id = await startContainer(['sh'], { stdin: true });
    const stdin = new PassThrough();
    const out = new Sink();
    const ac = new AbortController();
    const session = engine.streaming.attach({ containerId: id, stdin, stdout: out, stderr: new Sink(), tty: false, signal: ac.signal });
    await until('the answer', () => {
      if (!out.text) stdin.write('echo hi\n');
      return out.text.includes('hi\n') || undefined;
    });
    expect(out.text.startsWith('hi\n')).toBe(true);
    ac.abort();
    await session;
    // detaching leaves the container running
    expect((await engine.containerStatus(id)).state).toBe('CONTAINER_RUNNING');
    // its output also went to the CRI log
    const log = readFileSync((await engine.containerStatus(id)).logPath, 'utf8');
    expect(log).toMatch(/ stdout F hi\n/);
  });

  it('stdin_once: the end of the client input closes the container stdin (cat exits, the session ends)', async () => {
    const id = await startContainer(['cat'], { stdin: true, stdin_once: true });
    const stdin = new PassThrough();
    const out = new Sink();
    const session = engine.streaming.attach({ containerId: id, stdin, stdout: out, stderr: null, tty: false });
    await until('the attach socket to carry input', () => {
      if (!out.text) stdin.write('ping\n');
      return out.text.includes('ping\n') || undefined;
    });
    stdin.end();
    await session;
    await until('cat to exit', async () => ((await engine.containerStatus(id)).state === 'CONTAINER_EXITED' ? true : undefined));
    expect((await engine.containerStatus(id)).exitCode).toBe(0);
  });

  it('a tty container: its shell runs on a terminal, output is one stream, and it is logged as stdout', async () => {
    const id = await startContainer(['sh'], { stdin: true, tty: true });
    const stdin = new PassThrough();
    const out = new Sink();
    const resize = new Resizer();
    const ac = new AbortController();
    const session = engine.streaming.attach({ containerId: id, stdin, stdout: out, stderr: null, tty: true, resize, signal: ac.signal });
    resize.emit({ width: 91, height: 19 });
    await until('a terminal', () => {
      stdin.write('busybox tty; busybox stty size\n');
      return /\/dev\/pts\/\d+\r\n/.test(out.text) && /19 91/.test(out.text) ? true : undefined;
    });
    ac.abort();
    await session;
    const log = readFileSync((await engine.containerStatus(id)).logPath, 'utf8');
    expect(log).toMatch(/ stdout [FP] .*\/dev\/pts\/\d+/);
    await engine.stopContainer(id, 0);
  });

  it('a tty container without stdin: its terminal gets no stray input, output streams', async () => {
    const id = await startContainer(['sh', '-c', 'busybox tty; while true; do echo tock; sleep 0.1; done'], { tty: true });
    const out = new Sink();
    const ac = new AbortController();
    const session = engine.streaming.attach({ containerId: id, stdin: null, stdout: out, stderr: null, tty: true, signal: ac.signal });
    await until('output', () => out.text.includes('tock\r\n') || undefined);
    ac.abort();
    await session;
    const log = readFileSync((await engine.containerStatus(id)).logPath, 'utf8');
    expect(log).toMatch(/ stdout F \/dev\/pts\/\d+\r?\n/);
    expect(log).not.toContain('\0');
    expect(log).not.toContain('^@');
    await engine.stopContainer(id, 0);
  });

  it('a client that stops reading is detached once 8 MiB behind, and the container is never held back', async () => {
    // 12 MB without a newline, then a marker: a stalled client must neither block the writer nor make the engine
    // buffer it all. The container writes them once told to, after the attach is live: with a fixed `sleep 1` first,
    // a loaded CI run attached after the 12 MB were written, and the session, with nothing to fall behind on, never
    // ended
    const id = await startContainer([
      'sh',
      '-c',
      'while [ ! -e /tmp/go ]; do echo waiting; sleep 0.1; done; head -c 12000000 /dev/zero; echo; echo done-writing; sleep 3600',
    ]);
    let received = 0;
    const stalled = new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer) {
        received += chunk.length; // the callback is never called: this reader has stopped
      },
    });
    const session = engine.streaming.attach({ containerId: id, stdin: null, stdout: stalled, stderr: null, tty: false });
    await until('the attach to bring its first line', () => received > 0 || undefined);
    await engine.streaming.exec({
      containerId: id,
      cmd: ['sh', '-c', ': > /tmp/go'],
      stdin: null,
      stdout: new Sink(),
      stderr: null,
      tty: false,
    });
    await session; // ends by itself: the client fell too far behind
    const { logPath, state } = await engine.containerStatus(id);
    expect(state).toBe('CONTAINER_RUNNING');
    await until(
      'the writer to finish (not held back by the stalled client)',
      () => readFileSync(logPath, 'utf8').includes(' stdout F done-writing') || undefined,
    );
    expect(received).toBeLessThan(12_000_000);
    await engine.stopContainer(id, 0);
  });

  it('a container without stdin: output streams, nothing is written to it', async () => {
    const id = await startContainer(['sh', '-c', 'while true; do echo tick; sleep 0.1; done']);
    const out = new Sink();
    const ac = new AbortController();
    const session = engine.streaming.attach({ containerId: id, stdin: null, stdout: out, stderr: null, tty: false, signal: ac.signal });
    await until('output', () => out.text.includes('tick\n') || undefined);
    ac.abort();
    await session;
    await engine.stopContainer(id, 0);
  });
});

describe('port-forward', () => {
  let server: Server;
  let port: number;
  afterAll(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  it("connects to localhost:<port> inside the pod's netns: an HTTP request through it reaches busybox httpd", async () => {
    await startContainer(['httpd', '-f', '-p', '127.0.0.1:8080', '-h', '/www']);
    const forwards: Promise<void>[] = [];
    server = createServer((sock) => {
      forwards.push(engine.streaming.portForward({ sandboxId: podId.slice(0, 10), port: 8080, stream: sock }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
    const body = await until(
      'the page',
      () =>
        new Promise<string | undefined>((resolve) => {
          const req = request({ host: '127.0.0.1', port, path: '/index.html', timeout: 5000 }, (res) => {
            let b = '';
            res.on('data', (c: Buffer) => (b += c.toString()));
            res.on('end', () => resolve(b));
          });
          req.on('error', () => resolve(undefined));
          req.end();
        }),
    );
    expect(body).toBe(INDEX_HTML);
    await Promise.allSettled(forwards);
  });

  it('falls back to ::1 when nothing listens on 127.0.0.1 (as containerd: IPv4 first, then IPv6)', async () => {
    await startContainer(['httpd', '-f', '-p', '[::1]:8081', '-h', '/www']);
    const fromClient = new PassThrough();
    const toClient = new Sink();
    const stream = Duplex.from({ readable: fromClient, writable: toClient });
    await until('httpd on ::1', async () => {
      // nothing to send: the forward ends as soon as httpd answers the end of input by closing (an open input kept
      // the first successful try waiting for busybox httpd's own 60 s header timeout)
      const a = new PassThrough();
      a.end();
      const b = new Sink();
      const ok = await engine.streaming
        .portForward({ sandboxId: podId, port: 8081, stream: Duplex.from({ readable: a, writable: b }) })
        .then(
          () => true,
          () => undefined,
        );
      return ok;
    });
    const fwd = engine.streaming.portForward({ sandboxId: podId, port: 8081, stream });
    fromClient.end('GET /index.html HTTP/1.0\r\n\r\n');
    await fwd;
    expect(toClient.text).toMatch(/^HTTP\/1\.[01] 200/);
    expect(toClient.text.endsWith(INDEX_HTML)).toBe(true);
  });

  it('a port nothing listens on is Unavailable, and the client stream is ended', async () => {
    const stream = new PassThrough();
    await expect(engine.streaming.portForward({ sandboxId: podId, port: 8099, stream })).rejects.toSatisfy((e: unknown) =>
      hasCode(e, 'Unavailable'),
    );
    expect(stream.writableEnded).toBe(true);
  });
});

describe('logs', () => {
  it('follow prints what is there, then a line written later, and ends when the container exits; --tail and --since', async () => {
    const id = await startContainer(['sh', '-c', 'echo one; echo two >&2; echo three; read x; echo "late $x"'], {
      stdin: true,
      stdin_once: true,
    });
    const got: LogEntry[] = [];
    const follow = (async () => {
      for await (const e of await engine.containerLogs(id, { follow: true })) got.push(e);
    })();
    await until('the first lines', () => got.length >= 3 || undefined);
    // stdout and stderr are two pipes: their relative order is not defined, each one's is
    expect(got.filter((e) => e.stream === 'stdout').map((e) => e.text)).toEqual(['one', 'three']);
    expect(got.filter((e) => e.stream === 'stderr').map((e) => e.text)).toEqual(['two']);
    const stdin = new PassThrough();
    const attach = engine.streaming.attach({ containerId: id, stdin, stdout: null, stderr: null, tty: false });
    stdin.end('line\n');
    await attach;
    await follow;
    expect(got.map((e) => `${e.stream}:${e.text}`).slice(3)).toEqual(['stdout:late line']);

    const tail: string[] = [];
    for await (const e of await engine.containerLogs(id, { tail: 2, stream: 'stdout' })) tail.push(e.text);
    expect(tail).toEqual(['three', 'late line']);
    const onlyErr: string[] = [];
    for await (const e of await engine.containerLogs(id, { stream: 'stderr' })) onlyErr.push(e.text);
    expect(onlyErr).toEqual(['two']);
    const { rfc3339ToNs } = await import('../../shared/domain/cri-log');
    const since: string[] = [];
    for await (const e of await engine.containerLogs(id, { sinceNs: rfc3339ToNs(got[3]!.time) })) since.push(e.text);
    expect(since).toEqual(['late line']);
  });
});

describe('podscope logs (the CLI, an engine of its own in another process)', () => {
  const cli = (...args: string[]) => podscope(...args, ...engineFlagsFor({ ...env.options, cniBinDirs: ['/usr/lib/cni'] }));

  it('-f follows until the container exits; --tail with -t prints times; --since filters; stderr lines go to stderr', async () => {
    const id = await startContainer(['sh', '-c', 'echo a; echo b >&2; echo c; sleep 1.5; echo late']);
    // the CLI takes the state dir's lock: this file's engine lets go of it (the container's shim keeps running)
    await engine.close();
    const follow = await cli('logs', '-f', id);
    expect(follow.code).toBe(0);
    expect(follow.stdout).toBe('a\nc\nlate\n');
    expect(follow.stderr).toBe('b\n');
    const tail = await cli('logs', '--tail', '1', '-t', id);
    expect(tail.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z late\n$/);
    expect((await cli('logs', '--since', '1h', '--stream', 'stdout', id)).stdout).toBe('a\nc\nlate\n');
    expect((await cli('logs', '--since', '2999-01-01T00:00:00Z', id)).stdout).toBe('');
    const bad = await cli('logs', '--since', 'yesterday', id);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--since');
  });
});
