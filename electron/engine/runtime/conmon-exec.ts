/**
 * A terminal exec (`kubectl exec -it`) through conmon, as Podman runs it: `conmon --exec --exec-attach
 * --exec-process-spec <file> -t`, so the runtime hands the exec's pty to conmon over its console socket and no
 * terminal relay (util-linux `script`) is needed here. Exec with pipes stays `<runtime> exec` (runc-stream.ts): it has
 * its streams as plain pipes already, and conmon would add a daemonizing process per exec.
 *
 * The three pipes conmon is given (each a descriptor named by an environment variable):
 * - `_OCI_STARTPIPE`: conmon waits for a first write before it starts, and (with --exec-attach) a second one before it
 *   runs the runtime, so the client is attached before the process can write anything;
 * - `_OCI_ATTACHPIPE`: conmon says there when its attach socket (`attach` in the `-b` dir) is listening;
 * - `_OCI_SYNCPIPE`: `{"data": pid}` once the process runs (a negative number and a message when the runtime failed),
 *   then `{"data": exit code}` (128+N for a signal) when it has exited and its output is drained.
 * Resizes go to the `ctl` fifo in the same dir (conmon-attach.ts). (docs/semantics.md#container-monitor)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { PodscopeError } from '../../../shared/domain/errors';
import { parseRuncLog, readLogFrom, runcErrors } from './runc-log';
import { conmonSession, connectConmonAttach } from './conmon-attach';
import type { RuntimeStreamIO } from './runc-stream';

export interface ConmonExecOptions {
  conmonPath: string;
  /** the runtime by absolute path (conmon runs it without a PATH lookup) */
  runtimePath: string;
  /** its name in messages */
  handler: string;
  /** the runtime's `--root` */
  root: string;
}

interface SyncMessage {
  data?: number;
  message?: string;
}

/** JSON messages, one a line, from conmon's sync pipe */
function syncReader(from: Readable): () => Promise<SyncMessage | undefined> {
  const queue: SyncMessage[] = [];
  const waiting: ((m: SyncMessage | undefined) => void)[] = [];
  let text = '';
  let ended = false;
  from.on('data', (b: Buffer) => {
    text += b.toString();
    let nl: number;
    while ((nl = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, nl).trim();
      text = text.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      let m: SyncMessage;
      try {
        m = JSON.parse(line) as SyncMessage;
      } catch {
        continue;
      }
      const w = waiting.shift();
      if (w) w(m);
      else queue.push(m);
    }
  });
  const end = () => {
    ended = true;
    for (const w of waiting.splice(0)) w(undefined);
  };
  from.once('end', end);
  from.once('close', end);
  from.on('error', () => undefined);
  return () => {
    const m = queue.shift();
    if (m || ended) return Promise.resolve(m);
    return new Promise((resolve) => waiting.push(resolve));
  };
}

function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
}

/** `proc` (an OCI process with terminal: true) in container `id` under conmon; resolves with its exit code */
export async function conmonExecTerminal(o: ConmonExecOptions, id: string, proc: unknown, io: RuntimeStreamIO): Promise<number> {
  if (io.signal?.aborted) throw new PodscopeError('Canceled', `exec in container ${id} was canceled`);
  const tag = randomBytes(8).toString('hex');
  // beside the runtime's root, not in it: crun takes every dir in its root for a container
  const dir = join(`${o.root}-exec`, tag);
  await mkdir(join(dir, 'sock'), { recursive: true, mode: 0o700 });
  const files = {
    process: join(dir, 'process.json'),
    pid: join(dir, 'pid'),
    conmonPid: join(dir, 'conmon.pid'),
    log: join(dir, 'runtime.log'),
  };
  await writeFile(files.process, JSON.stringify(proc), { mode: 0o600 });
  try {
    const args = [
      '--api-version',
      '1',
      '--exec',
      '--exec-attach',
      '--exec-process-spec',
      files.process,
      '-t',
      ...(io.stdin ? ['-i'] : []),
      '-c',
      id,
      '-u',
      tag,
      '-r',
      o.runtimePath,
      '-b',
      dir,
      '-p',
      files.pid,
      '-P',
      files.conmonPid,
      '-l',
      'none',
      '--socket-dir-path',
      join(dir, 'sock'),
      '--runtime-arg',
      `--root=${o.root}`,
      '--runtime-arg',
      `--log=${files.log}`,
      '--runtime-arg',
      '--log-format=json',
    ];
    const child = spawn(o.conmonPath, args, {
      detached: true,
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', _OCI_SYNCPIPE: '3', _OCI_STARTPIPE: '4', _OCI_ATTACHPIPE: '5' },
    });
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    const spawned = new Promise<never>((_resolve, reject) =>
      child.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          new PodscopeError(
            'FailedPrecondition',
            e.code === 'ENOENT' ? 'conmon not found: install conmon (Debian package conmon)' : `cannot start conmon: ${e.message}`,
          ),
        ),
      ),
    );
    const sync = syncReader(child.stdio[3] as Readable);
    const start = child.stdio[4] as Writable;
    start.on('error', () => undefined);
    const attachReady = syncReader((child.stdio as unknown as Readable[])[5]!);
    const release = () => {
      child.unref();
      for (const s of child.stdio) (s as { destroy?: () => void } | null)?.destroy?.();
    };
    let pid = 0;
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      if (pid > 0) killGroup(pid);
      else if (child.pid) killGroup(child.pid);
    };
    io.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      start.write('0');
      const ready = await Promise.race([attachReady(), spawned]);
      if (!ready || (ready.data ?? -1) < 0)
        throw new PodscopeError('RuntimeError', `conmon could not set up the exec's attach socket: ${ready?.message ?? stderr.trim()}`);
      const sock = await connectConmonAttach(dir);
      const session = conmonSession(sock, dir, io, 'nothing');
      // attached: now conmon may run the runtime
      start.write('0');
      const first = await sync();
      if (!first || !(first.data !== undefined && first.data > 0)) {
        sock.destroy();
        const messages = runcErrors(parseRuncLog(await readLogFrom(files.log, 0)));
        throw new PodscopeError(
          'RuntimeError',
          `${o.handler} exec failed: ${messages.length ? messages.join('; ') : (first?.message ?? stderr.trim()) || 'unknown error'}`,
        );
      }
      pid = first.data;
      if (aborted) killGroup(pid);
      const [exit] = await Promise.all([sync(), session]);
      if (aborted) throw new PodscopeError('Canceled', `exec in container ${id} was canceled; its process was killed`);
      if (exit?.data === undefined || exit.data < 0)
        throw new PodscopeError(
          'RuntimeError',
          `conmon did not report the exit of the exec in container ${id}: ${exit?.message ?? 'no message'}`,
        );
      return exit.data;
    } finally {
      io.signal?.removeEventListener('abort', onAbort);
      release();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
