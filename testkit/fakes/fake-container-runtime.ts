/**
 * In-memory ContainerRuntime, CgroupReader and ContainerHost for tests above the OS boundary: containers "run" until
 * killed or told to exit; a container can ignore its stop signal (so StopContainer must escalate to SIGKILL); failures
 * are injected once. For tests only: product code never imports this.
 */
import { PodscopeError } from '../../shared/domain/errors';
import type { CgroupReader, CgroupUsage } from '../../electron/engine/runtime/cgroups';
import type { ContainerHost } from '../../electron/engine/containers/context';
import type {
  ContainerExit,
  ContainerRuntime,
  ContainerStdio,
  ExecProcess,
  KillTarget,
  StartedContainer,
} from '../../electron/engine/runtime/container-runtime';
import type { RuntimeStreamIO } from '../../electron/engine/runtime/runc-stream';
import type { TerminalSize } from '../../electron/engine/containers/streaming';
import type { Duplex } from 'node:stream';

/** what a streamed exec in the fake does; the default echoes (see FakeContainerRuntime.execStream) */
export type FakeExecScript = (cmd: string[], io: RuntimeStreamIO) => Promise<number>;

function canceled(what: string): PodscopeError {
  return new PodscopeError('Canceled', `${what} was canceled`);
}

/** runs until stdin ends (or right away without stdin), the signal aborts, or `stop` resolves */
function echoSession(io: RuntimeStreamIO, stop?: Promise<void>): Promise<'ended' | 'aborted' | 'stopped'> {
  return new Promise((resolve) => {
    const done = (why: 'ended' | 'aborted' | 'stopped') => {
      io.stdin?.off('data', onData);
      io.signal?.removeEventListener('abort', onAbort);
      resolve(why);
    };
    const onData = (b: Buffer) => io.stdout?.write(b);
    const onAbort = () => done('aborted');
    if (io.signal?.aborted) return done('aborted');
    io.signal?.addEventListener('abort', onAbort, { once: true });
    void stop?.then(() => done('stopped'));
    if (!io.stdin) {
      if (!stop) done('ended');
      return;
    }
    io.stdin.on('data', onData);
    io.stdin.once('end', () => done('ended'));
  });
}

interface FakeContainer {
  id: string;
  bundleDir: string;
  spec: unknown;
  logPath: string;
  pid: number;
  monitorPid: number;
  running: boolean;
  exit?: ContainerExit;
  stdio: ContainerStdio;
  /** resolves the attach sessions when the container exits */
  exited: Promise<void>;
  markExited: () => void;
  /** signals this container shrugs off (e.g. SIGTERM with a trap) */
  ignores: Set<string>;
}

export class FakeContainerRuntime implements ContainerRuntime {
  readonly containers = new Map<string, FakeContainer>();
  /** each container by its pid and its monitor's, so alive() is a lookup (a bench asks it for 1,000 containers) */
  private readonly byPid = new Map<number, FakeContainer>();
  /** every kill: [id, signal, all] */
  readonly kills: [string, string, boolean][] = [];
  /** the target each kill was given (what the engine recorded of the container's processes) */
  readonly killTargets: (KillTarget | undefined)[] = [];
  readonly execs: { id: string; cmd: string[]; process: ExecProcess }[] = [];
  readonly updates: { id: string; resources: unknown }[] = [];
  readonly reopened: number[] = [];
  /** the next start() throws this (once) after leaving a created container behind, as runc can */
  startError: Error | undefined;
  /** containers started from now on ignore these signals */
  ignoreSignals = new Set<string>();
  /** what exec() answers */
  execResult = { stdout: Buffer.from('out\n'), stderr: Buffer.alloc(0), exitCode: 0 };
  /** every streamed exec, attach and dial, with the sizes its resize source gave */
  readonly streamExecs: { id: string; process: unknown; tty: boolean; resizes: TerminalSize[] }[] = [];
  readonly attaches: { id: string; tty: boolean; resizes: TerminalSize[] }[] = [];
  readonly dials: { netnsPath: string | undefined; port: number }[] = [];
  /**
   * What a streamed exec does. Default: `echo a b` prints "a b\n"; otherwise stdin is echoed to stdout until it
   * ends; the exit code is `execStreamExitCode`. An abort rejects with Canceled, as the real one.
   */
  execScript: FakeExecScript | undefined;
  execStreamExitCode = 0;
  /** dials to these ports fail as nothing listened (Unavailable); other dials are an echo server */
  closedPorts = new Set<number>();
  private nextPid = 60_000;

  async execStream(id: string, process: unknown, io: RuntimeStreamIO): Promise<number> {
    const rec = { id, process, tty: io.tty, resizes: [] as TerminalSize[] };
    this.streamExecs.push(rec);
    if (!this.containers.get(id)?.running) throw new PodscopeError('RuntimeError', 'runc exec failed: container not running');
    const unsub = io.resize?.subscribe((s) => rec.resizes.push(s)) ?? (() => undefined);
    try {
      const cmd = (process as { args?: string[] }).args ?? [];
      if (this.execScript) return await this.execScript(cmd, io);
      if (cmd[0] === 'echo') io.stdout?.write(`${cmd.slice(1).join(' ')}\n`);
      else if ((await echoSession(io)) === 'aborted') throw canceled(`exec in container ${id}`);
      return this.execStreamExitCode;
    } finally {
      unsub();
    }
  }

  /** the container echoes what an attached client types; the session ends with stdin, an abort, or the exit */
  async attach(id: string, _bundleDir: string, io: RuntimeStreamIO): Promise<void> {
    const c = this.containers.get(id);
    const rec = { id, tty: io.tty, resizes: [] as TerminalSize[] };
    this.attaches.push(rec);
    if (!c?.running) throw new PodscopeError('FailedPrecondition', 'cannot attach: the container is not running');
    const unsub = io.resize?.subscribe((s) => rec.resizes.push(s)) ?? (() => undefined);
    try {
      await echoSession({ ...io, stdin: c.stdio.stdin ? io.stdin : null }, c.exited);
    } finally {
      unsub();
    }
  }

  /** an echo server at every port but closedPorts */
  async dial(netnsPath: string | undefined, port: number, stream: Duplex, signal?: AbortSignal): Promise<void> {
    this.dials.push({ netnsPath, port });
    if (this.closedPorts.has(port)) {
      stream.end();
      throw new PodscopeError('Unavailable', `failed to connect to localhost:${port} inside the pod network namespace`);
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done);
        if (!stream.writableEnded) stream.end();
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      stream.on('data', (b: Buffer) => {
        if (!stream.writableEnded) stream.write(b);
      });
      stream.once('end', done);
      stream.once('error', done);
    });
  }

  async start(id: string, bundleDir: string, spec: unknown, io: ContainerStdio): Promise<StartedContainer> {
    let markExited = () => undefined as void;
    const exited = new Promise<void>((r) => (markExited = r));
    const c: FakeContainer = {
      stdio: io,
      exited,
      markExited,
      id,
      bundleDir,
      spec,
      logPath: io.logPath,
      pid: this.nextPid++,
      monitorPid: this.nextPid++,
      running: true,
      ignores: new Set(this.ignoreSignals),
    };
    this.containers.set(id, c);
    this.byPid.set(c.pid, c).set(c.monitorPid, c);
    const error = this.startError;
    this.startError = undefined;
    if (error) {
      c.running = false;
      throw error;
    }
    return { pid: c.pid, monitorPid: c.monitorPid };
  }

  async kill(id: string, signal: string, all: boolean, target?: KillTarget): Promise<void> {
    this.kills.push([id, signal, all]);
    this.killTargets.push(target);
    const c = this.containers.get(id);
    if (!c || !c.running || c.ignores.has(signal)) return;
    this.exit(id, 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1));
  }

  async delete(id: string): Promise<void> {
    this.containers.delete(id);
  }

  async exitInfo(bundleDir: string): Promise<ContainerExit | undefined> {
    return [...this.containers.values()].find((c) => c.bundleDir === bundleDir)?.exit;
  }

  async exec(id: string, proc: ExecProcess): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    this.execs.push({ id, cmd: proc.args, process: proc });
    if (!this.containers.get(id)?.running) throw new PodscopeError('RuntimeError', 'runc exec failed: container not running');
    return this.execResult;
  }

  async update(id: string, resources: unknown): Promise<void> {
    this.updates.push({ id, resources });
  }

  async reopenLog(monitorPid: number): Promise<void> {
    this.reopened.push(monitorPid);
  }

  async list(): Promise<string[]> {
    return [...this.containers.keys()];
  }

  /** The container's process ends by itself with this code. */
  exit(id: string, exitCode: number): void {
    const c = this.containers.get(id);
    if (!c) return;
    c.running = false;
    c.exit = { exitCode, finishedAtNs: (BigInt(Date.now()) * 1_000_000n).toString() };
    c.markExited();
  }

  alive(pid: number): boolean {
    const c = this.byPid.get(pid);
    return c !== undefined && c.running && this.containers.get(c.id) === c;
  }
}

export class FakeCgroups implements CgroupReader {
  readonly usageByPath = new Map<string, CgroupUsage>();
  async usage(path: string): Promise<CgroupUsage> {
    return this.usageByPath.get(path) ?? { cpuUsageNs: 1_000_000n, memoryUsageBytes: 4096n, memoryWorkingSetBytes: 2048n };
  }
}

export class FakeContainerHost implements ContainerHost {
  readonly paths = new Set<string>(['/']);
  apparmor = false;
  async pathExists(path: string): Promise<boolean> {
    return this.paths.has(path);
  }
  async apparmorEnabled(): Promise<boolean> {
    return this.apparmor;
  }
}
