/**
 * In-memory PauseRuntime for unit tests: keeps containers and their specs under the location (handler, root) each
 * was started at, reports steps, fails on demand. A verb at another location does not find the container, as the real
 * runtime under another root would not.
 */
import { PodscopeError } from '../../shared/domain/errors';
import type {
  LocatedContainer,
  PauseExitInfo,
  PauseLocation,
  PauseRuntime,
  RuntimeState,
  RuntimeStepReporter,
} from '../../electron/engine/runtime/types';

interface FakeContainer extends RuntimeState {
  spec: unknown;
  at: PauseLocation;
  /** its conmon's pid: alive while the container runs */
  monitorPid: number;
  /** killMonitor(): conmon is gone, the pause runs on */
  monitorKilled?: boolean;
  /** what its conmon wrote at the exit */
  exit?: PauseExitInfo;
  /** exit(…, {exitFileLater}): the pause is gone, its conmon lives on until writeExitFile() */
  exitFilePending?: PauseExitInfo;
}

type StepOptions = { signal?: AbortSignal; report?: RuntimeStepReporter };

export class FakePauseRuntime implements PauseRuntime {
  readonly containers = new Map<string, FakeContainer>();
  /** each pause by its pid and its conmon's, so exists() is a lookup (a bench asks it for 1,000 pods) */
  private readonly byPid = new Map<number, FakeContainer>();
  readonly calls: { op: 'ensureRootfs' | 'start' | 'stop' | 'delete' | 'state' | 'list'; id?: string; handler?: string }[] = [];
  /** the next start() throws this (once), after leaving nothing behind, like the real runtime */
  startError: Error | undefined;
  /** the next stop() throws this (once) */
  stopError: Error | undefined;
  private nextPid = 40_000;

  constructor(
    readonly rootfsPath = '/fake/pause/rootfs',
    readonly runDir = '/fake/run',
  ) {}

  async ensureRootfs(): Promise<string> {
    this.calls.push({ op: 'ensureRootfs' });
    return this.rootfsPath;
  }

  locate(handler: string): PauseLocation {
    const h = handler || 'runc';
    return { handler: h, root: `${this.runDir}/${h}` };
  }

  locations(): PauseLocation[] {
    return ['runc', 'crun'].map((h) => this.locate(h));
  }

  async start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: StepOptions & { at?: PauseLocation },
  ): Promise<{ pid: number; monitorPid: number }> {
    const at = opts.at ?? this.locate('');
    this.calls.push({ op: 'start', id, handler: at.handler });
    opts.signal?.throwIfAborted();
    const error =
      this.startError ??
      (this.containers.has(id)
        ? new PodscopeError('RuntimeError', `${at.handler} create failed: container with id exists: ${id}`)
        : undefined);
    this.startError = undefined;
    this.report(opts.report, 'conmon.create', !error, error, { bundle: bundleDir });
    if (error) throw error;
    this.report(opts.report, `${at.handler}.start`, true, undefined, { command: `${at.handler} --root ${at.root} start ${id}` });
    const pid = this.nextPid++;
    const monitorPid = this.nextPid++;
    const c: FakeContainer = { id, pid, monitorPid, status: 'running', bundle: bundleDir, spec, at };
    this.containers.set(id, c);
    this.byPid.set(pid, c).set(monitorPid, c);
    return { pid, monitorPid };
  }

  async exitInfo(id: string): Promise<PauseExitInfo | undefined> {
    return this.containers.get(id)?.exit;
  }

  async stop(id: string, at: PauseLocation, opts: StepOptions = {}): Promise<void> {
    this.calls.push({ op: 'stop', id, handler: at.handler });
    const error = this.stopError;
    this.stopError = undefined;
    this.report(opts.report, `${at.handler}.kill`, !error, error, { command: `${at.handler} --root ${at.root} kill --all ${id} KILL` });
    if (error) throw error;
    if (this.at(id, at)) this.exit(id, 137);
  }

  async delete(id: string, at: PauseLocation, opts: StepOptions = {}): Promise<void> {
    this.calls.push({ op: 'delete', id, handler: at.handler });
    this.report(opts.report, `${at.handler}.delete`, true, undefined, { command: `${at.handler} --root ${at.root} delete --force ${id}` });
    if (this.at(id, at)) this.containers.delete(id);
  }

  async state(id: string, at: PauseLocation): Promise<RuntimeState | undefined> {
    this.calls.push({ op: 'state', id, handler: at.handler });
    const c = this.at(id, at);
    return c && { id: c.id, pid: c.pid, status: c.status, bundle: c.bundle };
  }

  async list(): Promise<string[]> {
    this.calls.push({ op: 'list' });
    return [...this.containers.keys()];
  }

  /**
   * while set, processAlive() throws it: a liveness probe that fails. Not once, because the engine's background
   * poll probes too and could take a one-shot failure meant for the call under test.
   */
  probeError: Error | undefined;
  /** while set, processAlive() waits for it first: a slow /proc */
  probeHold: Promise<unknown> | undefined;
  /** how many liveness probes ran */
  probes = 0;

  /**
   * Stands in for the engine's /proc liveness probe (EngineDeps.processAlive): a pid is alive while the container
   * that has it runs.
   */
  async processAlive(pid: number): Promise<boolean> {
    this.probes++;
    if (this.probeHold) await this.probeHold;
    if (this.probeError) throw this.probeError;
    return this.exists(pid);
  }

  /** Stands in for kill(pid, 0) (EngineDeps.processExists): the same answer, without counting a probe. */
  exists(pid: number): boolean {
    const c = this.byPid.get(pid);
    if (c === undefined || this.containers.get(c.id) !== c) return false;
    // conmon outlives its pause by the time it takes to reap it and write the exit file
    if (c.pid !== pid) return !c.monitorKilled && (c.status === 'running' || c.exitFilePending !== undefined);
    return c.status === 'running';
  }

  /** Simulates someone killing the pause's conmon: the pause runs on, unwatched (no exit file will come). */
  killMonitor(id: string): void {
    const c = this.containers.get(id);
    if (c) c.monitorKilled = true;
  }

  async listContainers(): Promise<LocatedContainer[]> {
    this.calls.push({ op: 'list' });
    return [...this.containers.values()].map((c) => ({
      id: c.id,
      status: c.status,
      annotations: { ...(c.spec as { annotations?: Record<string, string> } | undefined)?.annotations },
      at: c.at,
    }));
  }

  /**
   * Simulates the pause process dying on its own (OOM kill, someone's `kill -9`): conmon writes its exit file
   * (128+N for signal N), unless `withoutExitFile` (a pause no conmon watched).
   */
  exit(id: string, exitCode = 137, opts: { withoutExitFile?: boolean; exitFileLater?: boolean } = {}): void {
    const c = this.containers.get(id);
    if (!c || c.status === 'stopped') return;
    c.status = 'stopped';
    const info = { exitCode, finishedAtNs: (BigInt(Date.now()) * 1_000_000n).toString() };
    if (opts.exitFileLater) c.exitFilePending = info;
    else if (!opts.withoutExitFile) c.exit = info;
  }

  /** conmon writes the exit file an exit(…, {exitFileLater}) held back, and exits */
  writeExitFile(id: string): void {
    const c = this.containers.get(id);
    if (!c?.exitFilePending) return;
    c.exit = c.exitFilePending;
    c.exitFilePending = undefined;
  }

  /** the container when it lives at `at` (the real runtime under another root does not know it) */
  private at(id: string, at: PauseLocation): FakeContainer | undefined {
    const c = this.containers.get(id);
    return c && c.at.handler === at.handler && c.at.root === at.root ? c : undefined;
  }

  private report(
    report: RuntimeStepReporter | undefined,
    step: string,
    ok: boolean,
    error: unknown,
    detail: Record<string, unknown>,
  ): void {
    report?.({
      step,
      label: step.replace('.', ' '),
      startedAt: new Date().toISOString(),
      durationMs: 0,
      ok,
      ...(error ? { error } : {}),
      detail,
    });
  }
}
