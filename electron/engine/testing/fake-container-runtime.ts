/**
 * In-memory ContainerRuntime, CgroupReader and ContainerHost for tests above the OS boundary: containers "run" until
 * killed or told to exit; a container can ignore its stop signal (so StopContainer must escalate to SIGKILL); failures
 * are injected once. For tests only: product code never imports this.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { CgroupReader, CgroupUsage } from '../containers/cgroups';
import type { ContainerHost } from '../containers/context';
import type { ContainerExit, ContainerRuntime, StartedContainer } from '../containers/runtime';

interface FakeContainer {
  id: string;
  bundleDir: string;
  spec: unknown;
  logPath: string;
  pid: number;
  shimPid: number;
  running: boolean;
  exit?: ContainerExit;
  /** signals this container shrugs off (e.g. SIGTERM with a trap) */
  ignores: Set<string>;
}

export class FakeContainerRuntime implements ContainerRuntime {
  readonly containers = new Map<string, FakeContainer>();
  /** every kill: [id, signal, all] */
  readonly kills: [string, string, boolean][] = [];
  readonly execs: { id: string; cmd: string[] }[] = [];
  readonly updates: { id: string; resources: unknown }[] = [];
  readonly reopened: number[] = [];
  /** the next start() throws this (once) after leaving a created container behind, as runc can */
  startError: Error | undefined;
  /** containers started from now on ignore these signals */
  ignoreSignals = new Set<string>();
  /** what exec() answers */
  execResult = { stdout: Buffer.from('out\n'), stderr: Buffer.alloc(0), exitCode: 0 };
  private nextPid = 60_000;

  async start(id: string, bundleDir: string, spec: unknown, io: { logPath: string }): Promise<StartedContainer> {
    const c: FakeContainer = {
      id,
      bundleDir,
      spec,
      logPath: io.logPath,
      pid: this.nextPid++,
      shimPid: this.nextPid++,
      running: true,
      ignores: new Set(this.ignoreSignals),
    };
    this.containers.set(id, c);
    const error = this.startError;
    this.startError = undefined;
    if (error) {
      c.running = false;
      throw error;
    }
    return { pid: c.pid, shimPid: c.shimPid };
  }

  async kill(id: string, signal: string, all: boolean): Promise<void> {
    this.kills.push([id, signal, all]);
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

  async exec(id: string, cmd: string[]): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    this.execs.push({ id, cmd });
    if (!this.containers.get(id)?.running) throw new PodscopeError('RuntimeError', 'runc exec failed: container not running');
    return this.execResult;
  }

  async update(id: string, resources: unknown): Promise<void> {
    this.updates.push({ id, resources });
  }

  async reopenLog(shimPid: number): Promise<void> {
    this.reopened.push(shimPid);
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
  }

  alive(pid: number): boolean {
    return [...this.containers.values()].some((c) => c.running && (c.pid === pid || c.shimPid === pid));
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
