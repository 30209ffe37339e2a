/**
 * App containers under an OCI runtime (runc or crun: runtime/oci-runtime.ts), behind a small interface (real:
 * OciContainerRuntime, one per handler; fake: testkit/fakes). They live under their own `--root`
 * (`<runDir>/containers/<handler>`), apart from the pause containers, so the sandbox recovery's orphan sweep never
 * touches them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import type { ProcessRunner } from '../os/exec';
import type { OciRuntimeBinary } from '../runtime/oci-runtime';
import { parseRuncLog, readLogFrom, runcErrors } from '../runtime/runc-log';
import { sysctlWriteRefusal } from '../runtime/sysctl-rules';
import { attachToShim, dialInNetns, runcExecStream, type RuntimeStreamIO } from './runc-stream';
import { SHIM_SOURCE } from './shim';
import type { Duplex } from 'node:stream';

export interface ContainerExit {
  exitCode: number;
  signal?: string | null;
  finishedAtNs: string;
}

export interface StartedContainer {
  pid: number;
  shimPid: number;
}

/** the container's own stdio, from its CRI config */
export interface ContainerStdio {
  logPath: string;
  /** keep a stdin the attach socket can write to (else the container reads /dev/null) */
  stdin?: boolean;
  /** the first attached client's end of input closes the container's stdin (without tty) */
  stdinOnce?: boolean;
  /** the container runs with a terminal (spec process.terminal) */
  tty?: boolean;
}

export interface ContainerRuntime {
  /** Writes config.json and starts the container under a detached log shim (`runc run --keep`). */
  start(id: string, bundleDir: string, spec: unknown, io: ContainerStdio, signal?: AbortSignal): Promise<StartedContainer>;
  /**
   * `runc exec` of an OCI process (the container's, with args and terminal replaced) with live streams; resolves with
   * its exit code (128+N for a signal); an abort kills it and rejects with Canceled.
   */
  execStream(id: string, process: unknown, io: RuntimeStreamIO): Promise<number>;
  /**
   * a session on the container's stdio through its monitor's attach socket; resolves when either side ends it.
   * stdinOnce: the container's (the client's end of input closes its stdin when it has no terminal).
   */
  attach(id: string, bundleDir: string, io: RuntimeStreamIO & { stdinOnce?: boolean }): Promise<void>;
  /** one TCP connection to localhost:port inside a netns (undefined: the host's), piped both ways to `stream` */
  dial(netnsPath: string | undefined, port: number, stream: Duplex, signal?: AbortSignal): Promise<void>;
  /** `runc kill [--all] id SIG`; an unknown or stopped container is a success. */
  kill(id: string, signal: string, all: boolean): Promise<void>;
  /** `runc delete --force`; idempotent */
  delete(id: string): Promise<void>;
  /** what the shim recorded when runc exited; undefined while it runs (or if no shim ever ran) */
  exitInfo(bundleDir: string): Promise<ContainerExit | undefined>;
  /** `runc exec`; a timeout kills the exec'd process and is DeadlineExceeded */
  exec(id: string, cmd: string[], timeoutMs: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }>;
  /** `runc update -r -` with an OCI LinuxResources document */
  update(id: string, resources: unknown): Promise<void>;
  /** asks the monitor (log shim: a signal; conmon: its ctl fifo in the bundle) to reopen its log file */
  reopenLog(shimPid: number, bundleDir?: string): Promise<void>;
  /** ids the runtime knows under this root */
  list(): Promise<string[]>;
  /** the runtime handler it serves (runc, crun); in messages */
  readonly handler?: string;
  /** a hint that start() is coming: get its slow part (a process start) going now; optional */
  warm?(): void;
  /** ends what warm() started and was not used; optional */
  close?(): void;
}

export interface OciContainerRuntimeOptions {
  /** runc or crun, and how its words differ (runtime/oci-runtime.ts) */
  binary: OciRuntimeBinary;
  /** `<runDir>/containers/<handler>` */
  root: string;
  runner: ProcessRunner;
  /** how long start waits for runc to report the pid (default 30 s) */
  startTimeoutMs?: number;
  /** the Node binary that runs the shim (default process.execPath; Electron runs it as Node) */
  nodePath?: string;
}

function runtimeError(handler: string, what: string, stderr: string, exitCode: number | null): PodscopeError {
  const messages = runcErrors(parseRuncLog(stderr));
  return new PodscopeError(
    'RuntimeError',
    `${handler} ${what} failed: ${messages.length ? messages.join('; ') : stderr.trim() || `exit code ${exitCode}`}`,
    { details: { stderr: stderr.slice(-4000), exitCode } },
  );
}

export class OciContainerRuntime implements ContainerRuntime {
  private readonly bin: OciRuntimeBinary;

  constructor(private readonly o: OciContainerRuntimeOptions) {
    this.bin = o.binary;
  }

  /** runc or crun */
  get handler(): string {
    return this.bin.handler;
  }

  private warmShim: ChildProcess | undefined;

  private spawnShim(): ChildProcess {
    // the runc root in argv names the engine a shim belongs to (ps, leak checks); the config comes over IPC
    const child = spawn(this.o.nodePath ?? process.execPath, ['-e', SHIM_SOURCE, '--', 'warm', this.o.root], {
      // its own session: a Ctrl-C to the CLI or the app's process group must not reach the container's output
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      // a minimal env: NODE_OPTIONS from a dev loader (tsx, vitest) would slow every start and tie the shim to them
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ELECTRON_RUN_AS_NODE: '1' },
    });
    child.on('error', () => undefined);
    return child;
  }

  /** Starts a shim that waits for its config, so StartContainer does not pay for Node's start-up. */
  warm(): void {
    if (this.warmShim && this.warmShim.connected && this.warmShim.exitCode === null) return;
    const child = this.spawnShim();
    // an idle shim must not keep the engine's process alive (a CLI command ends while it waits)
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
    this.warmShim = child;
  }

  close(): void {
    const child = this.warmShim;
    this.warmShim = undefined;
    if (child?.connected) child.disconnect(); // it exits when its engine goes away before being used
  }

  async start(id: string, bundleDir: string, spec: unknown, io: ContainerStdio, signal?: AbortSignal): Promise<StartedContainer> {
    await mkdir(bundleDir, { recursive: true, mode: 0o755 });
    await writeFile(join(bundleDir, 'config.json'), JSON.stringify(spec, null, 2), { mode: 0o644 });
    const runcLog = join(bundleDir, 'runc.log');
    const pidFile = join(bundleDir, 'container.pid');
    const exitFile = join(bundleDir, 'exit.json');
    await rm(exitFile, { force: true });
    await rm(pidFile, { force: true });
    const cfg = {
      runc: this.bin.path,
      runWrap: await this.bin.runWrapper(),
      runKeep: this.bin.runKeep,
      root: this.o.root,
      bundle: bundleDir,
      id,
      pidFile,
      exitFile,
      runcLog,
      logPath: io.logPath,
      attach: true,
      stdin: io.stdin ?? false,
      stdinOnce: io.stdinOnce ?? false,
      tty: io.tty ?? false,
      ttyFile: join(bundleDir, 'tty'),
    };
    const warm = this.warmShim;
    this.warmShim = undefined;
    const child = warm && warm.connected && warm.exitCode === null ? warm : this.spawnShim();
    child.ref();
    (child.channel as { ref?: () => void } | undefined)?.ref?.();
    child.send({ cfg });
    const timeoutMs = this.o.startTimeoutMs ?? 30_000;
    try {
      return await new Promise<StartedContainer>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new PodscopeError('DeadlineExceeded', `${this.bin.handler} did not start container ${id} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        const onAbort = () => reject(new PodscopeError('Canceled', `starting container ${id} was canceled`));
        signal?.addEventListener('abort', onAbort, { once: true });
        const settle = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        let answered = false;
        child.once('message', (m: { pid?: number; shimPid?: number; error?: string; exitCode?: number }) => {
          answered = true;
          settle();
          if (m.pid) resolve({ pid: m.pid, shimPid: m.shimPid ?? child.pid! });
          else {
            void readLogFrom(runcLog, 0).then((text) => {
              const messages = runcErrors(parseRuncLog(text));
              reject(
                sysctlWriteRefusal(messages.length ? messages : [m.error ?? ''], spec) ??
                  new PodscopeError(
                    'RuntimeError',
                    `${this.bin.handler} run failed: ${messages.length ? messages.join('; ') : (m.error ?? 'unknown error')}`,
                    { details: { exitCode: m.exitCode, runcErrors: messages } },
                  ),
              );
            }, reject);
          }
        });
        child.once('error', (e) => {
          settle();
          reject(new PodscopeError('RuntimeError', `cannot start the log shim: ${e.message}`));
        });
        // 'close', not 'exit': 'exit' can come before the shim's last IPC message has been read (a container that
        // exits at once), and that message says whether runc started it; 'close' waits for the channel too
        child.once('close', (code) => {
          // the answer is in (its runc log may still be being read): that, not the shim's exit, says what happened
          if (answered) return;
          settle();
          reject(new PodscopeError('RuntimeError', `the log shim exited (code ${code}) before the container started`));
        });
      });
    } finally {
      // the engine keeps no tie to the shim: no channel, no ref, so neither keeps the other alive
      if (child.connected) child.disconnect();
      child.unref();
    }
  }

  async kill(id: string, signal: string, all: boolean): Promise<void> {
    const r = await this.runc(['kill', ...(all ? ['--all'] : []), id, signal.replace(/^SIG/, '')], 10_000);
    if (r.exitCode !== 0 && !this.bin.doesNotExist.test(r.stderr) && !this.bin.notRunning.test(r.stderr))
      throw runtimeError(this.bin.handler, 'kill', r.stderr, r.exitCode);
  }

  async delete(id: string): Promise<void> {
    const r = await this.runc(['delete', '--force', id], 30_000);
    if (r.exitCode !== 0 && !this.bin.doesNotExist.test(r.stderr)) throw runtimeError(this.bin.handler, 'delete', r.stderr, r.exitCode);
  }

  async exitInfo(bundleDir: string): Promise<ContainerExit | undefined> {
    try {
      return JSON.parse(await readFile(join(bundleDir, 'exit.json'), 'utf8')) as ContainerExit;
    } catch {
      return undefined;
    }
  }

  async exec(id: string, cmd: string[], timeoutMs: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    // runc's own failures (unknown container, missing binary) go to --log, the process's output to the pipes
    await mkdir(this.o.root, { recursive: true, mode: 0o700 });
    const tag = randomBytes(8).toString('hex');
    const log = join(this.o.root, `exec-${tag}.log`);
    const pidFile = join(this.o.root, `exec-${tag}.pid`);
    try {
      const r = await new Promise<{ stdout: Buffer; stderr: Buffer; code: number | null; sig: NodeJS.Signals | null }>(
        (resolve, reject) => {
          const child = spawn(
            this.bin.path,
            ['--root', this.o.root, '--log', log, '--log-format', 'json', 'exec', '--pid-file', pidFile, id, ...cmd],
            {
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
          const out: Buffer[] = [];
          const err: Buffer[] = [];
          let timedOut = false;
          let fallback: NodeJS.Timeout | undefined;
          const timer =
            timeoutMs > 0
              ? setTimeout(() => {
                  timedOut = true;
                  // kill the exec'd process, not runc: killing runc alone leaves it running in the container, and
                  // containerd's ExecSync kills the exec process on timeout (internal/cri/server/container_execsync.go).
                  // runc, its parent, then reaps it and exits, so no zombie is left when the call returns; runc is
                  // killed only when there is no pid to kill or it does not exit.
                  void readFile(pidFile, 'utf8')
                    .then((t) => {
                      const pid = Number.parseInt(t.trim(), 10);
                      if (!(pid > 0)) throw new Error('no pid');
                      process.kill(pid, 'SIGKILL');
                      fallback = setTimeout(() => child.kill('SIGKILL'), 5_000);
                    })
                    .catch(() => child.kill('SIGKILL'));
                }, timeoutMs)
              : undefined;
          child.stdout.on('data', (b: Buffer) => out.push(b));
          child.stderr.on('data', (b: Buffer) => err.push(b));
          child.on('error', (e) => {
            clearTimeout(timer);
            reject(new PodscopeError('RuntimeError', `cannot run ${this.bin.handler} exec: ${e.message}`));
          });
          child.on('close', (code, sig) => {
            clearTimeout(timer);
            clearTimeout(fallback);
            if (timedOut)
              reject(
                new PodscopeError('DeadlineExceeded', `command ${JSON.stringify(cmd.join(' '))} timed out after ${timeoutMs / 1000}s`),
              );
            else resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), code, sig });
          });
        },
      );
      const messages = runcErrors(parseRuncLog(await readLogFrom(log, 0)));
      if (messages.length > 0)
        throw new PodscopeError('RuntimeError', `${this.bin.handler} exec failed: ${messages.join('; ')}`, {
          details: { exitCode: r.code },
        });
      return { stdout: r.stdout, stderr: r.stderr, exitCode: r.code ?? 128 + (r.sig ? (osConstants.signals[r.sig] ?? 0) : 0) };
    } finally {
      await rm(log, { force: true });
      await rm(pidFile, { force: true });
    }
  }

  execStream(id: string, process: unknown, io: RuntimeStreamIO): Promise<number> {
    return runcExecStream(this.streamOptions(), id, process, io);
  }

  attach(_id: string, bundleDir: string, io: RuntimeStreamIO): Promise<void> {
    return attachToShim(bundleDir, io);
  }

  dial(netnsPath: string | undefined, port: number, stream: Duplex, signal?: AbortSignal): Promise<void> {
    return dialInNetns(this.streamOptions(), netnsPath, port, stream, signal);
  }

  private streamOptions() {
    return { runcPath: this.bin.path, handler: this.bin.handler, root: this.o.root, nodePath: this.o.nodePath };
  }

  async update(id: string, resources: unknown): Promise<void> {
    const doc = JSON.stringify(resources);
    let file: string | undefined;
    if (!this.bin.updateFromStdin) {
      await mkdir(this.o.root, { recursive: true, mode: 0o700 });
      file = join(this.o.root, `update-${randomBytes(8).toString('hex')}.json`);
      await writeFile(file, doc, { mode: 0o600 });
    }
    try {
      const r = await this.o.runner.run({
        file: this.bin.path,
        args: ['--root', this.o.root, 'update', '--resources', file ?? '-', id],
        ...(file ? {} : { input: doc }),
        timeoutMs: 10_000,
      });
      if (r.exitCode !== 0) throw runtimeError(this.bin.handler, 'update', r.stderr, r.exitCode);
    } finally {
      if (file) await rm(file, { force: true });
    }
  }

  async reopenLog(shimPid: number, _bundleDir?: string): Promise<void> {
    try {
      process.kill(shimPid, 'SIGUSR1');
    } catch (e) {
      throw new PodscopeError(
        'FailedPrecondition',
        `the container's log shim (pid ${shimPid}) is gone: ${(e as NodeJS.ErrnoException).code}`,
      );
    }
  }

  async list(): Promise<string[]> {
    const r = await this.runc(['list', '--format', 'json'], 10_000);
    if (r.exitCode !== 0) throw runtimeError(this.bin.handler, 'list', r.stderr, r.exitCode);
    return ((JSON.parse(r.stdout) as { id: string }[] | null) ?? []).map((c) => c.id);
  }

  private runc(args: string[], timeoutMs: number) {
    return this.o.runner.run({ file: this.bin.path, args: ['--root', this.o.root, ...args], timeoutMs });
  }
}
