/** In-memory PauseRuntime for unit tests: keeps containers and their specs, reports steps, fails on demand. */
import { PodscopeError } from '../../shared/domain/errors';
import type { PauseExitInfo, PauseRuntime, PauseState, RuntimeContainer, RuntimeStepReporter } from '../../electron/engine/runtime/types';

interface FakeContainer extends PauseState {
  spec: unknown;
  /** its conmon's pid: alive while the container runs */
  monitorPid: number;
  /** killMonitor(): conmon is gone, the pause runs on */
  monitorKilled?: boolean;
  /** what its conmon wrote at the exit */
  exit?: PauseExitInfo;
}

export class FakePauseRuntime implements PauseRuntime {
  readonly containers = new Map<string, FakeContainer>();
  readonly calls: { op: 'ensureRootfs' | 'start' | 'stop' | 'delete' | 'state' | 'list'; id?: string }[] = [];
  /** the next start() throws this (once), after leaving nothing behind, like the real runtime */
  startError: Error | undefined;
  /** the next stop() throws this (once) */
  stopError: Error | undefined;
  private nextPid = 40_000;

  constructor(readonly rootfsPath = '/fake/pause/rootfs') {}

  async ensureRootfs(): Promise<string> {
    this.calls.push({ op: 'ensureRootfs' });
    return this.rootfsPath;
  }

  async start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: { signal?: AbortSignal; report?: RuntimeStepReporter },
  ): Promise<{ pid: number; monitorPid: number }> {
    this.calls.push({ op: 'start', id });
    opts.signal?.throwIfAborted();
    const error =
      this.startError ??
      (this.containers.has(id) ? new PodscopeError('RuntimeError', `runc run failed: container with id exists: ${id}`) : undefined);
    this.startError = undefined;
    this.report(opts.report, 'conmon.create', !error, error, { bundle: bundleDir });
    if (error) throw error;
    this.report(opts.report, 'runc.start', true, undefined, { command: `runc start ${id}` });
    const pid = this.nextPid++;
    const monitorPid = this.nextPid++;
    this.containers.set(id, { id, pid, monitorPid, status: 'running', bundle: bundleDir, spec });
    return { pid, monitorPid };
  }

  async exitInfo(id: string): Promise<PauseExitInfo | undefined> {
    return this.containers.get(id)?.exit;
  }

  async stop(id: string, opts: { signal?: AbortSignal; report?: RuntimeStepReporter } = {}): Promise<void> {
    this.calls.push({ op: 'stop', id });
    const error = this.stopError;
    this.stopError = undefined;
    this.report(opts.report, 'runc.kill', !error, error, { command: `runc kill ${id} KILL` });
    if (error) throw error;
    this.exit(id, 137);
  }

  async delete(id: string, opts: { signal?: AbortSignal; report?: RuntimeStepReporter } = {}): Promise<void> {
    this.calls.push({ op: 'delete', id });
    this.report(opts.report, 'runc.delete', true, undefined, { command: `runc delete --force ${id}` });
    this.containers.delete(id);
  }

  async state(id: string): Promise<PauseState | undefined> {
    this.calls.push({ op: 'state', id });
    const c = this.containers.get(id);
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
    return [...this.containers.values()].some(
      (c) => c.status === 'running' && (c.pid === pid || (c.monitorPid === pid && !c.monitorKilled)),
    );
  }

  /** Simulates someone killing the pause's conmon: the pause runs on, unwatched (no exit file will come). */
  killMonitor(id: string): void {
    const c = this.containers.get(id);
    if (c) c.monitorKilled = true;
  }

  async listContainers(): Promise<RuntimeContainer[]> {
    this.calls.push({ op: 'list' });
    return [...this.containers.values()].map((c) => ({
      id: c.id,
      status: c.status,
      annotations: { ...(c.spec as { annotations?: Record<string, string> } | undefined)?.annotations },
    }));
  }

  /**
   * Simulates the pause process dying on its own (OOM kill, someone's `kill -9`): conmon writes its exit file
   * (128+N for signal N), unless `withoutExitFile` (a pause no conmon watched).
   */
  exit(id: string, exitCode = 137, opts: { withoutExitFile?: boolean } = {}): void {
    const c = this.containers.get(id);
    if (!c || c.status === 'stopped') return;
    c.status = 'stopped';
    if (!opts.withoutExitFile) c.exit = { exitCode, finishedAtNs: (BigInt(Date.now()) * 1_000_000n).toString() };
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
