/**
 * The sandbox engine: one object behind every front door (Electron IPC, browser mode, CLI, CRI socket).
 * Verbs live in their own files; this class holds the state they share and the event fan-out.
 */
import { readFile } from 'node:fs/promises';
import type { CniConfigView } from '../../../shared/domain/cni';
import { isHostNetwork } from '../../../shared/domain/config';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { analyzePortMappings } from '../../../shared/domain/portmap';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import { resolveIdPrefix } from './id-index';
import type { ConfigPreview, EngineInfo, RunSandboxRequest, RuntimeCondition, SandboxEvent, SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import type { Engine, EngineOptions, SandboxEventListener } from '../options';
import { buildCniOptions } from './cni-options';
import type { EngineContext } from './context';
import { KeyedMutex } from './keyed-mutex';
import { NameRegistrar } from './name-registrar';
import { recoverSandboxes, type RecoveryReport } from './recover';
import { removeSandbox } from './remove';
import { parseRunConfig, runSandbox } from './run';
import { isProcessAlive, listSandboxes, refreshLiveness, sandboxStatus } from './status';
import { liveNetwork } from './live';
import type { LiveNetworkView } from '../../../shared/domain/live';
import type { CniCheckReport, CniStatusReport, ThroughputOptions, ThroughputReport } from '../../../shared/domain/measure';
import type { NetworkTopology, PodTopology } from '../../../shared/domain/topology';
import { measureThroughput } from '../throughput/measure';
import { networkTopology, podTopology } from '../topology/read';
import { cniCheck, cniStatus } from './cni-verbs';
import { every, watchConfDir, type Stoppable } from './watchers';
import { stopSandbox } from './stop';
import { SandboxStore } from './store';
import type { StateDirLock } from './state-lock';

export const ENGINE_VERSION = '0.1.0';
/** /proc reads only, so cheap enough to run every couple of seconds */
const PAUSE_POLL_MS = 2000;

export type EngineDeps = Omit<EngineContext, 'store' | 'names' | 'locks' | 'emit' | 'processAlive'> & {
  processAlive?: EngineContext['processAlive'];
  lock?: StateDirLock;
  /** problems found while setting up (missing runc, not root…), shown by info() */
  problems?: string[];
};

export class SandboxEngine implements Engine {
  private readonly listeners = new Set<SandboxEventListener>();
  private readonly ctx: EngineContext;
  private recovery: RecoveryReport = { loaded: 0, problems: [], orphanContainers: [] };
  private readonly background: Stoppable[] = [];

  constructor(private readonly deps: EngineDeps) {
    this.ctx = {
      ...deps,
      store: new SandboxStore(deps.options.stateDir),
      names: new NameRegistrar(),
      locks: new KeyedMutex(),
      emit: (e) => this.emit(e),
      processAlive: deps.processAlive ?? isProcessAlive,
    };
  }

  get options(): EngineOptions {
    return this.deps.options;
  }

  /** Loads the store and reconciles it with runc and the netns dir; call once before serving. */
  async start(): Promise<RecoveryReport> {
    await this.ctx.cni.load();
    this.recovery = await recoverSandboxes(this.ctx);
    this.background.push(
      watchConfDir(this.deps.options.cniConfDir, () => void this.reloadCniConfig()),
      every(PAUSE_POLL_MS, async () => {
        for (const rec of this.ctx.store.all()) await refreshLiveness(this.ctx, rec);
      }),
    );
    return this.recovery;
  }

  subscribe(listener: SandboxEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: SandboxEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // a broken subscriber must not break the engine
      }
    }
  }

  /** The signal cancels a run in flight; what it had acquired is undone as for any failure. */
  run(req: RunSandboxRequest, signal?: AbortSignal): Promise<{ id: string }> {
    return runSandbox(this.ctx, req, signal);
  }

  stop(id: string): Promise<void> {
    return stopSandbox(this.ctx, id);
  }

  remove(id: string): Promise<void> {
    return removeSandbox(this.ctx, id);
  }

  status(id: string): Promise<SandboxStatus> {
    return sandboxStatus(this.ctx, id);
  }

  list(filter?: SandboxFilter): Promise<SandboxSummary[]> {
    return listSandboxes(this.ctx, filter);
  }

  async cniConfig(): Promise<CniConfigView> {
    return this.ctx.cni.config();
  }

  /** Reloads the conf dir and tells subscribers (the UI's CNI panel). */
  async reloadCniConfig(): Promise<CniConfigView> {
    const config = await this.ctx.cni.load();
    this.emit({ type: 'cni.config', config });
    return config;
  }

  async preview(req: RunSandboxRequest): Promise<ConfigPreview> {
    const config = parseRunConfig(req.config);
    const hostNetwork = isHostNetwork(config);
    const preview: ConfigPreview = {
      hostNetwork,
      plugins: [],
      portMappings: analyzePortMappings(config.port_mappings),
      bandwidth: analyzeBandwidth(config.annotations),
      cniArgs: [],
      errors: [],
    };
    if (hostNetwork) return preview;
    try {
      const opts = buildCniOptions('<sandbox-id>', config);
      preview.cniArgs = opts.args;
      preview.plugins = this.ctx.cni.preview(opts);
    } catch (e) {
      preview.errors.push((e as Error).message);
    }
    return preview;
  }

  async runtimeConditions(): Promise<RuntimeCondition[]> {
    const runtimeProblems = (this.deps.problems ?? []).filter((p) => p.startsWith('runtime:'));
    const conditions: RuntimeCondition[] = [
      runtimeProblems.length === 0
        ? { type: 'RuntimeReady', status: true, reason: '', message: '' }
        : { type: 'RuntimeReady', status: false, reason: 'RuntimeNotReady', message: runtimeProblems.join('; ') },
    ];
    try {
      await this.ctx.cni.status();
      conditions.push({ type: 'NetworkReady', status: true, reason: '', message: '' });
    } catch (e) {
      conditions.push({ type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: `Network plugin returns error: ${serializeError(e).message}` });
    }
    return conditions;
  }

  live(id: string): Promise<LiveNetworkView> {
    return liveNetwork(this.ctx, id);
  }

  /** One measurement per sandbox at a time: two transfers through one veth would halve each other. */
  private readonly measuring = new Set<string>();

  async throughput(id: string, opts: ThroughputOptions = {}, signal?: AbortSignal): Promise<ThroughputReport> {
    const meter = this.ctx.throughputMeter;
    if (!meter) throw new PodscopeError('FailedPrecondition', 'this engine has no throughput meter');
    const key = resolveIdPrefix(this.ctx.store.ids(), id) ?? id;
    if (this.measuring.has(key)) throw new PodscopeError('FailedPrecondition', `a throughput measurement of sandbox ${key} is already running`);
    this.measuring.add(key);
    try {
      return await measureThroughput({ ctx: this.ctx, meter, signal, onProgress: (progress) => this.emit({ type: 'sandbox.measureProgress', id: key, progress }) }, id, opts);
    } finally {
      this.measuring.delete(key);
    }
  }

  topology(id: string): Promise<PodTopology> {
    return podTopology(this.ctx, id);
  }

  networkTopology(network: string): Promise<NetworkTopology> {
    return networkTopology(this.ctx, network);
  }

  cniCheck(id: string): Promise<CniCheckReport> {
    return cniCheck(this.ctx, id);
  }

  cniStatus(): Promise<CniStatusReport> {
    return cniStatus(this.ctx);
  }

  async info(): Promise<EngineInfo> {
    const o = this.deps.options;
    const cni = this.ctx.cni.config();
    return {
      version: ENGINE_VERSION,
      pid: process.pid,
      uid: process.getuid?.() ?? -1,
      stateDir: o.stateDir,
      runDir: o.runDir,
      netnsDir: o.netnsDir,
      cniConfDir: o.cniConfDir,
      cniBinDirs: o.cniBinDirs,
      cniCacheDir: o.cniCacheDir,
      ipPreference: o.ipPreference,
      maxConfNum: o.maxConfNum,
      pluginTimeoutMs: o.pluginTimeoutMs,
      problems: [
        ...(this.deps.problems ?? []).map((p) => p.replace(/^runtime: /, '')),
        ...(cni.ready ? [] : [`CNI: ${cni.notReadyReason ?? 'not ready'}`]),
        ...this.recovery.problems,
      ],
    };
  }

  async close(): Promise<void> {
    for (const b of this.background.splice(0)) b.stop();
    this.listeners.clear();
    await this.deps.lock?.release();
  }
}

export async function readOwnOomScoreAdj(): Promise<number> {
  const text = await readFile('/proc/self/oom_score_adj', 'utf8').catch(() => '0');
  return Number.parseInt(text.trim(), 10) || 0;
}

