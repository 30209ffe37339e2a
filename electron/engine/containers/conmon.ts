/**
 * conmon (CRI-O's container monitor, Debian `conmon` 2.1.6) watches every app container (docs/semantics.md#container-monitor).
 *
 * Start: conmon (`--api-version 1`) daemonizes, runs `<runtime> create` with the container's stdio as its own pipes,
 * and says over its sync pipe (`_OCI_SYNCPIPE`, fd 3 here) the container's pid or why create failed; the engine then
 * runs `<runtime> start`. conmon stays the container's parent (a subreaper), writes each output line in the CRI format
 * to log_path (`-l k8s-file:`), the exit code to `<bundle>/exits/<id>` (`--exit-dir`; its mtime is the finish time),
 * an `oom` file in the bundle (its persist dir) when the OOM killer fires, and reopens the log when `2 0 0` is written
 * to its `ctl` fifo. The container keeps its runtime state (runc and crun alike: created with `create`) until the
 * engine deletes it, so the OOM count of its cgroup is still there when the exit is noticed.
 *
 * Attach is conmon's attach socket (conmon-attach.ts); a tty container gets its terminal from conmon (`-t`: conmon
 * passes the runtime a `--console-socket` and receives the pty's master over it), and resizes go to its `ctl` fifo.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { parseRuncLog, readLogFrom, runcErrors } from '../runtime/runc-log';
import { sysctlWriteRefusal } from '../runtime/sysctl-rules';
import { conmonExecTerminal } from './conmon-exec';
import type { RuntimeStreamIO } from './runc-stream';
import { attachToConmon, CONMON_CTL, writeConmonCtl, type ConmonAttachIO } from './conmon-attach';
import {
  OciContainerRuntime,
  type ContainerExit,
  type ContainerStdio,
  type OciContainerRuntimeOptions,
  type StartedContainer,
} from './runtime';

export interface ConmonContainerRuntimeOptions extends OciContainerRuntimeOptions {
  /** the conmon binary (default conmon) */
  conmonPath?: string;
}

/** `name` as conmon wants it: an absolute path, looked up on PATH when it has no slash */
async function absoluteExecutable(name: string): Promise<string> {
  if (name.includes('/')) return name;
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(dir || '.', name);
    if (
      await access(p, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return p;
  }
  return name;
}

export class ConmonContainerRuntime extends OciContainerRuntime {
  constructor(private readonly c: ConmonContainerRuntimeOptions) {
    super(c);
  }

  override async start(id: string, bundleDir: string, spec: unknown, io: ContainerStdio, signal?: AbortSignal): Promise<StartedContainer> {
    const bin = this.c.binary;
    await mkdir(bundleDir, { recursive: true, mode: 0o755 });
    await writeFile(join(bundleDir, 'config.json'), JSON.stringify(spec, null, 2), { mode: 0o644 });
    const runtimeLog = join(bundleDir, 'runc.log');
    const exitDir = join(bundleDir, 'exits');
    const pidFile = join(bundleDir, 'container.pid');
    const conmonPidFile = join(bundleDir, 'conmon.pid');
    await rm(exitDir, { recursive: true, force: true });
    await mkdir(exitDir, { recursive: true });
    // conmon links <socket-dir>/<id> to the bundle there, and dies (logging only to syslog) when the dir is missing
    await mkdir(join(bundleDir, 'sock'), { recursive: true });
    await rm(pidFile, { force: true });
    const wrapper = await bin.runWrapper();
    // conmon runs the runtime itself, by absolute path only; a wrapper (crun on a hybrid cgroup host,
    // oci-runtime.ts) becomes a script
    let runtimePath = await absoluteExecutable(bin.path);
    if (wrapper.length > 0) {
      runtimePath = join(bundleDir, `${bin.handler}-wrapped`);
      const q = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
      await writeFile(runtimePath, `#!/bin/sh\nexec ${[...wrapper, bin.path].map(q).join(' ')} "$@"\n`, { mode: 0o755 });
    }
    const args = [
      '--api-version',
      '1',
      '-c',
      id,
      '-u',
      id,
      '-n',
      id,
      '-r',
      runtimePath,
      '-b',
      bundleDir,
      '-p',
      pidFile,
      '-P',
      conmonPidFile,
      '-l',
      `k8s-file:${io.logPath || join(bundleDir, 'output.log')}`,
      '--exit-dir',
      exitDir,
      '--persist-dir',
      bundleDir,
      '--socket-dir-path',
      join(bundleDir, 'sock'),
      '--runtime-arg',
      `--root=${this.c.root}`,
      '--runtime-arg',
      `--log=${runtimeLog}`,
      '--runtime-arg',
      '--log-format=json',
      ...(io.tty ? ['-t'] : []),
      ...(io.stdin ? ['-i'] : []),
      // a client's end of input closes the container's stdin only for stdin_once without a terminal (containerd's attach)
      ...(io.stdin && !(io.stdinOnce && !io.tty) ? ['--leave-stdin-open'] : []),
    ];
    const child = spawn(this.c.conmonPath ?? 'conmon', args, {
      // its own session; conmon daemonizes, so the engine keeps no tie to it
      detached: true,
      // conmon writes its `oom` notice into its working directory: the bundle, not wherever the engine runs
      cwd: bundleDir,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', _OCI_SYNCPIPE: '3' },
    });
    const sync = child.stdio[3] as NodeJS.ReadableStream;
    let text = '';
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    const reply = await new Promise<{ data?: number; message?: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new PodscopeError('DeadlineExceeded', `conmon did not create container ${id} within 30000 ms`)),
        30_000,
      );
      const onAbort = () => reject(new PodscopeError('Canceled', `starting container ${id} was canceled`));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (v: { data?: number; message?: string }) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      sync.on('data', (b: Buffer) => {
        text += b.toString();
        const line = text.split('\n').find((l) => l.trim().startsWith('{'));
        if (line) {
          try {
            done(JSON.parse(line) as { data?: number; message?: string });
          } catch {
            /* a partial line: wait for the rest */
          }
        }
      });
      child.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new PodscopeError(
            'FailedPrecondition',
            e.code === 'ENOENT' ? 'conmon not found: install conmon (Debian package conmon)' : `cannot start conmon: ${e.message}`,
          ),
        );
      });
      child.once('close', (code) => {
        if (!text.trim()) done({ data: -1, message: stderr.trim() || `conmon exited with code ${code} before creating the container` });
      });
    });
    // the daemonized conmon holds the other ends: let go of ours, or they keep the engine's event loop alive
    child.unref();
    (sync as unknown as { destroy(): void }).destroy();
    child.stderr?.destroy();
    if (!(reply.data !== undefined && reply.data > 0)) {
      const messages = runcErrors(parseRuncLog(await readLogFrom(runtimeLog, 0)));
      throw (
        sysctlWriteRefusal(messages.length ? messages : [reply.message ?? ''], spec) ??
        new PodscopeError(
          'RuntimeError',
          `${bin.handler} create failed: ${messages.length ? messages.join('; ') : (reply.message ?? 'unknown error')}`,
          {
            details: { runcErrors: messages },
          },
        )
      );
    }
    const started = await this.c.runner.run({ file: bin.path, args: ['--root', this.c.root, 'start', id], timeoutMs: 30_000 });
    if (started.exitCode !== 0) {
      const messages = runcErrors(parseRuncLog(started.stderr));
      throw new PodscopeError(
        'RuntimeError',
        `${bin.handler} start failed: ${messages.length ? messages.join('; ') : started.stderr.trim()}`,
      );
    }
    const conmonPid = Number.parseInt((await readFile(conmonPidFile, 'utf8').catch(() => '')).trim(), 10);
    return { pid: reply.data, monitorPid: conmonPid > 0 ? conmonPid : 0 };
  }

  override async exitInfo(bundleDir: string): Promise<ContainerExit | undefined> {
    // conmon names the exit file after the container id; the bundle is <runDir>/containers/<id>/bundle
    const file = join(bundleDir, 'exits', bundleDir.split('/').at(-2) ?? '');
    try {
      const [text, s] = await Promise.all([readFile(file, 'utf8'), stat(file, { bigint: true })]);
      const exitCode = Number.parseInt(text.trim(), 10);
      if (!Number.isFinite(exitCode)) return undefined;
      return { exitCode, finishedAtNs: s.mtimeNs.toString() };
    } catch {
      return undefined;
    }
  }

  override async reopenLog(monitorPid: number, bundleDir?: string): Promise<void> {
    if (!bundleDir)
      throw new PodscopeError('FailedPrecondition', `the container's conmon (pid ${monitorPid}) has no state dir to be reached through`);
    await writeConmonCtl(bundleDir, CONMON_CTL.reopenLogs, monitorPid);
  }

  override async execStream(id: string, proc: unknown, io: RuntimeStreamIO): Promise<number> {
    // with pipes, the runtime's own exec (runc-stream.ts) has nothing for conmon to do
    if (!io.tty) return super.execStream(id, proc, io);
    return conmonExecTerminal(
      {
        conmonPath: this.c.conmonPath ?? 'conmon',
        runtimePath: await absoluteExecutable(this.c.binary.path),
        handler: this.c.binary.handler,
        root: this.c.root,
      },
      id,
      proc,
      io,
    );
  }

  override attach(_id: string, bundleDir: string, io: ConmonAttachIO): Promise<void> {
    return attachToConmon(bundleDir, io);
  }
}
