/**
 * Containers under an OCI runtime (runc or crun: runtime/oci-runtime.ts), behind a small interface (real:
 * ConmonContainerRuntime, one per handler and root, on the runtime verbs of OciContainerRuntime here; fake:
 * testkit/fakes). The same implementation runs a pod's pause container (runtime/pause-runtime.ts), as containerd
 * and CRI-O run the sandbox container on the pod's runtime (docs/semantics.md#runtime-handlers). App containers live
 * under `<runDir>/containers/<handler>`, pauses under `<runDir>/<handler>`: each start-up sweep lists only its own
 * roots, so the sandbox recovery never touches an app container and the container recovery never a pause.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { describeCommand, type ExecResult, type ProcessRunner } from '../os/exec';
import type { OciRuntimeBinary } from './oci-runtime';
import { parseRuncLog, readLogFrom, runcErrors } from './runc-log';
import { reportedStep, runtimeFailure } from './runtime-steps';
import { waitStopped } from './wait-stopped';
import type { RuntimeState, RuntimeContainer, RuntimeStepReporter } from './types';
import { dialInNetns, runcExecStream, type RuntimeStreamIO } from './runc-stream';
import type { Duplex } from 'node:stream';

export interface ContainerExit {
  exitCode: number;
  signal?: string | null;
  finishedAtNs: string;
}

/** What the engine recorded of a running container: enough to signal its processes without a runtime process. */
export interface KillTarget {
  /** its init (with start time, to tell it from a reused pid) */
  pid?: number;
  startTicks?: number;
  /** the cgroup runc put it in (OCI cgroupsPath): every process of the container */
  cgroupsPath: string;
}

/** The host's touch points for a kill without a runtime process (real: kill(2), /proc, cgroup.procs). */
export interface HostProcessKiller {
  /** kill(2) by name; a process already gone is no error */
  signal(pid: number, signal: string): void;
  processAlive(pid: number, startTicks?: number): Promise<boolean>;
  /** the pids in the cgroup; undefined when it cannot be read */
  procs?(cgroupsPath: string): Promise<number[] | undefined>;
}

export interface StartedContainer {
  pid: number;
  monitorPid: number;
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

/** an OCI process document for an exec: the container's own, with `args` replaced */
export interface ExecProcess {
  args: string[];
  [field: string]: unknown;
}

/** a runtime verb's cancel signal and where its steps are reported (the pod's trace shows them) */
export interface RuntimeStepOptions {
  signal?: AbortSignal;
  report?: RuntimeStepReporter;
}

export interface ContainerRuntime {
  /**
   * Writes config.json and starts the container under its monitor (conmon), which outlives the engine. A failure
   * leaves no runtime container and no conmon behind.
   */
  start(id: string, bundleDir: string, spec: unknown, io: ContainerStdio, opts?: RuntimeStepOptions): Promise<StartedContainer>;
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
  /**
   * `runc kill [--all] id SIG`; an unknown or stopped container is a success. With `target` (what the engine
   * recorded), the signal goes straight to the processes where the host allows it (signalDirectly).
   */
  kill(id: string, signal: string, all: boolean, target?: KillTarget, opts?: RuntimeStepOptions): Promise<void>;
  /** `runc delete --force`; idempotent */
  delete(id: string, opts?: RuntimeStepOptions): Promise<void>;
  /**
   * what the monitor recorded when the container exited; undefined while it runs (or if no monitor ever ran). The id
   * names the exit file; by default the bundle's parent directory's name (`<runDir>/containers/<id>/bundle`).
   */
  exitInfo(bundleDir: string, id?: string): Promise<ContainerExit | undefined>;
  /**
   * `runc exec --process` of an OCI process (the container's, with args replaced and no terminal) with pipes; a
   * timeout kills the exec'd process and is DeadlineExceeded
   */
  exec(id: string, process: ExecProcess, timeoutMs: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }>;
  /** `runc update -r -` with an OCI LinuxResources document */
  update(id: string, resources: unknown): Promise<void>;
  /** asks the monitor (conmon: its ctl fifo in the bundle) to reopen its log file */
  reopenLog(monitorPid: number, bundleDir?: string): Promise<void>;
  /** ids the runtime knows under this root */
  list(): Promise<string[]>;
  /** the runtime handler it serves (runc, crun); in messages */
  readonly handler?: string;
}

export interface OciContainerRuntimeOptions {
  /** runc or crun, and how its words differ (runtime/oci-runtime.ts) */
  binary: OciRuntimeBinary;
  /** `<runDir>/containers/<handler>` */
  root: string;
  runner: ProcessRunner;
  /** the Node binary that runs the port-forward dialer (default process.execPath; Electron runs it as Node) */
  nodePath?: string;
  /** kills without a runtime process (absent: every kill is the runtime's) */
  killer?: HostProcessKiller;
  /** per runtime command (default 30 s) */
  commandTimeoutMs?: number;
}

/**
 * What `runc kill [--all]` does, without a runtime process (one exec is ~15-50 ms on a loaded host): the signal to
 * the container's init (its pid and start time checked first, as runc checks its state), or with `all` to every
 * process of the container's cgroup, read again until a pass finds no process it has not signalled yet (a fork that
 * raced the first read is caught by the next). Returns false where the host cannot (a signal Node does not name, no
 * known pid, no cgroup reader, a cgroup that cannot be read, or processes still appearing): then the runtime's kill.
 */
export async function signalDirectly(killer: HostProcessKiller, target: KillTarget, signal: string, all: boolean): Promise<boolean> {
  if (target.pid === undefined || !(signal in osConstants.signals)) return false;
  if (!all) {
    if (await killer.processAlive(target.pid, target.startTicks)) killer.signal(target.pid, signal);
    return true;
  }
  if (!killer.procs) return false;
  const signalled = new Set<number>();
  for (let pass = 0; pass < 4; pass++) {
    const pids = await killer.procs(target.cgroupsPath);
    if (pids === undefined) return false;
    const fresh = pids.filter((p) => !signalled.has(p));
    if (fresh.length === 0) return true;
    for (const p of fresh) {
      killer.signal(p, signal);
      signalled.add(p);
    }
  }
  return false;
}

/**
 * The runtime's own verbs, the same under any monitor and for any container (an app's or a pod's pause); the
 * monitor's (start, attach, exit, log) are the subclass's.
 */
export abstract class OciContainerRuntime implements ContainerRuntime {
  protected readonly bin: OciRuntimeBinary;
  private readonly commandTimeoutMs: number;

  constructor(protected readonly o: OciContainerRuntimeOptions) {
    this.bin = o.binary;
    this.commandTimeoutMs = o.commandTimeoutMs ?? 30_000;
  }

  /** runc or crun */
  get handler(): string {
    return this.bin.handler;
  }

  /** its `--root` */
  get root(): string {
    return this.o.root;
  }

  abstract start(id: string, bundleDir: string, spec: unknown, io: ContainerStdio, opts?: RuntimeStepOptions): Promise<StartedContainer>;
  abstract attach(id: string, bundleDir: string, io: RuntimeStreamIO & { stdinOnce?: boolean }): Promise<void>;
  abstract exitInfo(bundleDir: string, id?: string): Promise<ContainerExit | undefined>;
  abstract reopenLog(monitorPid: number, bundleDir?: string): Promise<void>;

  async kill(id: string, signal: string, all: boolean, target?: KillTarget, opts: RuntimeStepOptions = {}): Promise<void> {
    if (target && this.o.killer && (await signalDirectly(this.o.killer, target, signal, all))) return;
    await this.killByRuntime(id, signal, all, opts);
  }

  /** `<runtime> kill`; resolves true when the runtime does not know the container (nothing left to wait for) */
  private async killByRuntime(id: string, signal: string, all: boolean, opts: RuntimeStepOptions): Promise<boolean> {
    let gone = false;
    await this.step('kill', ['kill', ...(all ? ['--all'] : []), id, signal.replace(/^SIG/, '')], opts, (r) => {
      gone = this.bin.doesNotExist.test(r.stderr);
      return r.exitCode === 0 || gone || this.bin.notRunning.test(r.stderr) ? undefined : runtimeFailure(this.bin.handler, 'kill', r);
    });
    return gone;
  }

  /**
   * SIGKILL to every process of the container (`kill --all`: with the host's PID namespace its processes do not die
   * with its init), then wait until its init is gone and its conmon with it, so the exit file is written and no
   * process of it is left. Idempotent: an unknown or stopped container is a success.
   */
  async stop(id: string, opts: RuntimeStepOptions & { timeoutMs?: number } = {}): Promise<void> {
    if (!(await this.killByRuntime(id, 'KILL', true, opts)))
      await waitStopped(id, this.bin.handler, (signal) => this.state(id, signal), opts, opts.timeoutMs ?? 10_000);
  }

  async delete(id: string, opts: RuntimeStepOptions = {}): Promise<void> {
    await this.step('delete', ['delete', '--force', id], opts, (r) =>
      r.exitCode === 0 || this.bin.doesNotExist.test(r.stderr) ? undefined : runtimeFailure(this.bin.handler, 'delete', r),
    );
  }

  /** `<runtime> state`: undefined when the runtime does not know the container */
  async state(id: string, signal?: AbortSignal): Promise<RuntimeState | undefined> {
    if (!this.rootExists()) return undefined;
    const r = await this.run(['state', id], signal);
    if (r.exitCode !== 0) {
      if (this.bin.doesNotExist.test(r.stderr)) return undefined;
      throw runtimeFailure(this.bin.handler, 'state', r);
    }
    const s = JSON.parse(r.stdout) as RuntimeState;
    return { id: s.id, pid: s.pid, status: s.status, bundle: s.bundle };
  }

  /**
   * Every container under this root with its status and OCI annotations (they say which engine owns it). runc's list
   * carries the annotations; crun's does not, so they are read from the bundle's config.json then.
   */
  async listContainers(): Promise<RuntimeContainer[]> {
    if (!this.rootExists()) return [];
    const r = await this.run(['list', '--format', 'json']);
    if (r.exitCode !== 0) throw runtimeFailure(this.bin.handler, 'list', r);
    // runc prints `null` when its root holds no container
    const items = JSON.parse(r.stdout || 'null') as
      | { id: string; status?: string; bundle?: string; annotations?: Record<string, string> }[]
      | null;
    return (items ?? []).map((c) => ({
      id: c.id,
      status: c.status ?? '',
      annotations: c.annotations ?? (c.bundle ? bundleAnnotations(c.bundle) : {}),
    }));
  }

  /** ids the runtime knows under this root */
  async list(): Promise<string[]> {
    return (await this.listContainers()).map((c) => c.id);
  }

  /**
   * runc creates its --root on any command, even `list` and `state`: with no root there is no container, and a
   * look (a read-only `podscope pods` on a fresh run dir) must not create one.
   */
  private rootExists(): boolean {
    return existsSync(this.o.root);
  }

  /**
   * One runtime command, reported as `<handler>.<verb>` when the caller reports steps; `judge` turns the result into
   * the error to throw, if any.
   */
  protected async step(
    verb: string,
    args: string[],
    opts: RuntimeStepOptions,
    judge: (r: ExecResult) => PodscopeError | undefined,
  ): Promise<void> {
    let r: ExecResult | undefined;
    const detail = () => ({
      command: r?.command ?? describeCommand(this.bin.path, ['--root', this.o.root, ...args]),
      exitCode: r?.exitCode,
    });
    await reportedStep(opts.report, `${this.bin.handler}.${verb}`, `${this.bin.handler} ${verb}`, detail, async () => {
      r = await this.run(args, opts.signal);
      const error = judge(r);
      if (error) throw error;
    });
  }

  async exec(id: string, proc: ExecProcess, timeoutMs: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    // runc's own failures (unknown container, missing binary) go to --log, the process's output to the pipes
    await mkdir(this.o.root, { recursive: true, mode: 0o700 });
    const tag = randomBytes(8).toString('hex');
    const log = join(this.o.root, `exec-${tag}.log`);
    const pidFile = join(this.o.root, `exec-${tag}.pid`);
    // the whole process document, not bare args: without it crun 1.8.1 runs the command as uid 0 with no
    // supplementary groups, where runc (and containerd's ExecSync) use the container's user, env and capabilities
    const processFile = join(this.o.root, `exec-${tag}.json`);
    const cmd = proc.args;
    try {
      await writeFile(processFile, JSON.stringify({ ...proc, terminal: false }), { mode: 0o600 });
      const r = await new Promise<{ stdout: Buffer; stderr: Buffer; code: number | null; sig: NodeJS.Signals | null }>(
        (resolve, reject) => {
          const child = spawn(
            this.bin.path,
            ['--root', this.o.root, '--log', log, '--log-format', 'json', 'exec', '--process', processFile, '--pid-file', pidFile, id],
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
      await rm(processFile, { force: true });
    }
  }

  execStream(id: string, process: unknown, io: RuntimeStreamIO): Promise<number> {
    return runcExecStream(this.streamOptions(), id, process, io);
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
      if (r.exitCode !== 0) throw runtimeFailure(this.bin.handler, 'update', r);
    } finally {
      if (file) await rm(file, { force: true });
    }
  }

  private run(args: string[], signal?: AbortSignal): Promise<ExecResult> {
    return this.o.runner.run({ file: this.bin.path, args: ['--root', this.o.root, ...args], timeoutMs: this.commandTimeoutMs, signal });
  }
}

/** the annotations of the OCI spec in a bundle; none when it cannot be read */
function bundleAnnotations(bundle: string): Record<string, string> {
  try {
    return (JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as { annotations?: Record<string, string> }).annotations ?? {};
  } catch {
    return {};
  }
}
