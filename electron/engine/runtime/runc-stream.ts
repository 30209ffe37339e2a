/**
 * The OS side of streaming for runc and crun containers: `<runtime> exec` with live stdio as pipes, and a TCP dial
 * from inside a network namespace. A terminal exec and attach go through conmon (conmon-exec.ts, conmon-attach.ts).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import type { Duplex, Readable, Writable } from 'node:stream';
import { PodscopeError } from '../../../shared/domain/errors';
import { nodeScriptEnv } from '../os/node-script-env';
import { parseRuncLog, readLogFrom, runcErrors } from './runc-log';
import type { StreamIO } from './stream-io';

/** the io of one streaming session as the runtime sees it */
export type RuntimeStreamIO = StreamIO;

/**
 * Copies into a writable we must not end (the caller may share it, e.g. the CLI's process.stdout), with
 * backpressure: a slow reader pauses the source (the process then blocks on its pipe) instead of buffering without
 * bound. Once the writable is gone, the rest is read and dropped, so the process never hangs on a dead client.
 */
function forward(from: Readable, to: Writable | null): void {
  if (!to) {
    from.resume();
    return;
  }
  const gone = () => to.destroyed || to.writableEnded;
  to.once('close', () => from.resume());
  from.on('data', (b: Buffer) => {
    if (gone()) return;
    if (!to.write(b)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
}

/** stdin into a child's pipe; the pipe's end is the process's EOF; EPIPE (it exited) is not an error */
function feed(stdin: Readable | null, to: Writable | null, onEnd?: () => void): () => void {
  if (!to) return () => undefined;
  to.on('error', () => undefined);
  if (!stdin) {
    if (onEnd) onEnd();
    else to.end();
    return () => undefined;
  }
  const onData = (b: Buffer) => {
    if (to.destroyed || to.writableEnded) return;
    if (!to.write(b)) {
      stdin.pause();
      to.once('drain', () => stdin.resume());
    }
  };
  to.once('close', () => stdin.resume());
  const end = () => {
    if (onEnd) onEnd();
    else if (!to.destroyed) to.end();
  };
  stdin.on('data', onData);
  stdin.once('end', end);
  return () => {
    stdin.off('data', onData);
    stdin.off('end', end);
  };
}

function signalKill(pid: number | undefined, group: boolean): void {
  if (!pid) return;
  try {
    process.kill(group ? -pid : pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}

export interface RuncStreamOptions {
  /** the OCI runtime binary (runc or crun: both take the same exec command line) */
  runcPath: string;
  /** its name in messages (default runc) */
  handler?: string;
  root: string;
  nodePath?: string;
  nsenterPath?: string;
}

/**
 * `runc exec --process <json>` with the caller's streams as pipes (a terminal exec is conmon's: conmon-exec.ts). Returns the exit code (128+N for signal N). As with kubectl
 * exec on containerd, the session lasts until the output pipes close: runc copies them until EOF, so a background
 * child holding them keeps the session open (an abort ends it). The process's host pid comes from `--pid-file`, so an
 * abort can SIGKILL it (and its process group) directly: killing only runc would leave the process running in the
 * container, since runc merely forwards the signals it can catch.
 */
export async function runcExecStream(o: RuncStreamOptions, id: string, proc: unknown, io: RuntimeStreamIO): Promise<number> {
  await mkdir(o.root, { recursive: true, mode: 0o700 });
  const base = join(o.root, `exec-${randomBytes(8).toString('hex')}`);
  const files = { process: `${base}.json`, log: `${base}.log`, pid: `${base}.pid` };
  await writeFile(files.process, JSON.stringify(proc), { mode: 0o600 });
  const args = [
    '--root',
    o.root,
    '--log',
    files.log,
    '--log-format',
    'json',
    'exec',
    '--process',
    files.process,
    '--pid-file',
    files.pid,
    id,
  ];
  const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' };
  try {
    if (io.signal?.aborted) throw new PodscopeError('Canceled', `exec in container ${id} was canceled`);
    if (io.tty) throw new PodscopeError('Internal', 'a terminal exec runs under conmon (conmon-exec.ts), not with pipes');
    // its own process group: an abort can end runc and whatever of it is left in one kill
    const child = spawn(o.runcPath, args, { stdio: [io.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true, env });
    const unfeed = feed(io.stdin, child.stdin);
    forward(child.stdout!, io.stdout);
    forward(child.stderr!, io.stderr);
    let aborted = false;
    let closed = false;
    const onAbort = () => {
      aborted = true;
      // runc writes the pid file just after the process started: an abort in between waits for it
      const t0 = Date.now();
      const tryKill = () => {
        if (closed) return;
        void readFile(files.pid, 'utf8').then(
          (t) => {
            const pid = Number.parseInt(t, 10);
            if (!(pid > 0)) return void setTimeout(tryKill, 10);
            signalKill(pid, true);
            signalKill(pid, false);
            // runc exits once it has reaped the process; if it does not within a moment, end it and its group
            setTimeout(() => !closed && signalKill(child.pid, true), 2000).unref();
          },
          () => {
            if (Date.now() - t0 < 2000) setTimeout(tryKill, 10);
            else signalKill(child.pid, true);
          },
        );
      };
      tryKill();
    };
    io.signal?.addEventListener('abort', onAbort, { once: true });
    const r = await new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve, reject) => {
      child.once('error', (e) => reject(new PodscopeError('RuntimeError', `cannot run ${o.handler ?? 'runc'} exec: ${e.message}`)));
      child.once('close', (code, sig) => resolve({ code, sig }));
    }).finally(() => {
      closed = true;
      io.signal?.removeEventListener('abort', onAbort);
      unfeed();
    });
    const messages = runcErrors(parseRuncLog(await readLogFrom(files.log, 0)));
    if (messages.length > 0)
      throw new PodscopeError('RuntimeError', `${o.handler ?? 'runc'} exec failed: ${messages.join('; ')}`, {
        details: { exitCode: r.code },
      });
    if (aborted) throw new PodscopeError('Canceled', `exec in container ${id} was canceled; its process was killed`);
    return r.code ?? 128 + (r.sig ? (osConstants.signals[r.sig] ?? 0) : 0);
  } finally {
    await Promise.all(Object.values(files).map((f) => rm(f, { force: true })));
  }
}

/**
 * A unix socket path for a file in `dir` that fits sun_path (108 bytes) however deep the dir is: through an open
 * descriptor of the dir (/proc/self/fd/N/name), as conmon does for its attach socket. Close the fd after connect/bind.
 */
export function shortSocketPath(dir: string, name: string): { path: string; close(): void } {
  const fd = openSync(dir, 'r');
  return { path: `/proc/self/fd/${fd}/${name}`, close: () => closeSync(fd) };
}

/**
 * The dialer run inside the pod's netns: connect to localhost:<port> over IPv4, else IPv6 (containerd
 * internal/cri/server/sandbox_portforward_linux.go), say "ok" or the error on stderr, then copy both ways. When one
 * direction is done the other gets a second to finish before everything closes (containerd waits the same).
 */
/** how far an attach client may fall behind the container's output before it is detached */
export const ATTACH_MAX_BEHIND = 8 * 1024 * 1024;

const DIAL_SOURCE = String.raw`
'use strict';
const net = require('net');
const port = Number(process.argv[process.argv.length - 1]);
function dial(host) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, allowHalfOpen: true });
    s.once('connect', () => { s.removeAllListeners('error'); resolve(s); });
    s.once('error', reject);
  });
}
dial('127.0.0.1').catch((e4) => dial('::1').catch((e6) => {
  process.stderr.write('ERR failed to connect to localhost:' + port + ' inside the pod network namespace, IPv4: ' + e4.message + ' IPv6: ' + e6.message + '\n');
  process.exit(2);
})).then((s) => {
  process.stderr.write('ok\n');
  let done = false;
  const finish = () => { if (done) return; done = true; setTimeout(() => { s.destroy(); process.exit(0); }, 1000).unref(); };
  s.on('error', () => { s.destroy(); process.exit(0); });
  process.stdin.pipe(s);
  process.stdin.once('end', finish);
  s.pipe(process.stdout);
  s.once('end', finish);
  s.once('close', () => process.stdout.end(() => process.exit(0)));
});
`;

/**
 * One forwarded connection. Why a child process: a socket can only be opened inside a netns by a thread that has
 * joined it (setns), which Node cannot do; `nsenter --net=<path>` (util-linux, always on Debian) runs a tiny Node
 * dialer (the engine's own binary, no new package such as socat) inside it, and its stdin/stdout are the
 * connection. netnsPath undefined: the pod uses the host network, so the dialer runs in the engine's.
 */
export async function dialInNetns(
  o: RuncStreamOptions,
  netnsPath: string | undefined,
  port: number,
  stream: Duplex,
  signal?: AbortSignal,
): Promise<void> {
  const node = o.nodePath ?? process.execPath;
  const env = nodeScriptEnv();
  const argv = [node, '-e', DIAL_SOURCE, '--', String(port)];
  const child = netnsPath
    ? spawn(o.nsenterPath ?? 'nsenter', [`--net=${netnsPath}`, '--', ...argv], { stdio: ['pipe', 'pipe', 'pipe'], env })
    : spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env });
  let err = '';
  let connected = false;
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      if (!connected && /^ok$/m.test(err)) {
        connected = true;
        resolve();
      }
    });
    child.once('error', (e) => reject(new PodscopeError('RuntimeError', `cannot run the port-forward dialer: ${e.message}`)));
    child.once('close', (code) => {
      if (!connected) {
        const msg = /^ERR (.*)$/m.exec(err)?.[1] ?? (err.trim() || `the dialer exited with code ${code}`);
        reject(new PodscopeError('Unavailable', msg, { details: { port } }));
      }
    });
  });
  const onAbort = () => child.kill('SIGKILL');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    try {
      await ready;
    } catch (e) {
      stream.end();
      throw e;
    }
    stream.on('error', () => child.kill('SIGKILL'));
    // a client stream destroyed without an end: the pod side gets its FIN, and a second to finish (as on an end)
    stream.once('close', () => {
      if (child.exitCode !== null) return;
      if (!child.stdin.destroyed) child.stdin.end();
      setTimeout(() => child.kill('SIGKILL'), 1000).unref();
    });
    const unfeed = feed(stream, child.stdin);
    forward(child.stdout, stream);
    await new Promise<void>((resolve) => {
      child.stdout.once('end', () => {
        if (!stream.destroyed && !stream.writableEnded) stream.end();
      });
      child.once('close', () => {
        unfeed();
        if (!stream.destroyed && !stream.writableEnded) stream.end();
        resolve();
      });
    });
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
