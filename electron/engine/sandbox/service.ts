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
import type { ConfigPreview, EngineInfo, RemoveOptions, RunSandboxRequest, RuntimeCondition, SandboxEvent, SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import type { LabApi } from '../../../shared/domain/lab';
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
import { every, watchConfDir, type Stoppable } from './watchers';
import { stopSandbox } from './stop';
import { SandboxStore } from './store';
import type { StateDirLock } from './state-lock';
import { loadStateDirId, netnsTag, stampOwner, withOwnedNetnsNames } from './ownership';
import { gcItem } from './startup-gc';

export const ENGINE_VERSION = '0.1.0';
/** /proc reads only, so cheap enough to run every couple of seconds */
const PAUSE_POLL_MS = 2000;

export type EngineDeps = Omit<EngineContext, 'store' | 'names' | 'locks' | 'emit' | 'processAlive' | 'readOnly' | 'owner'> & {
  processAlive?: EngineContext['processAlive'];
  /** CLI `pods`/`inspectp`: nothing on the host is changed (see EngineContext.readOnly) */
  readOnly?: boolean;
  lock?: StateDirLock;
  /** problems found while setting up (missing runc, not root…), shown by info() */
  problems?: string[];
};

export class SandboxEngine implements Engine {
  private readonly listeners = new Set<SandboxEventListener>();
  /** set by createEngine (the lab runs beside the engine, not through it) */
  lab?: LabApi;
  private readonly ctx: EngineContext;
  private recovery: RecoveryReport = { loaded: 0, problems: [], orphanContainers: [], startupGc: [] };
  private readonly background: Stoppable[] = [];
  /** what forced removes left on the host in this process's lifetime (shown by info()) */
  private readonly forcedLeftovers: string[] = [];
  /** the netns name tag, known once start() has read the state dir id */
  private readonly ownerTag: { value: Buffer | undefined };

  constructor(private readonly deps: EngineDeps) {
    const readOnly = deps.readOnly ?? false;
    const owner = { stateDirId: undefined as string | undefined };
    const tag = { value: undefined as Buffer | undefined };
    this.ctx = {
      ...deps,
      readOnly,
      owner,
      // every namespace name and pause container carries the owner's id (ownership.ts)
      netns: withOwnedNetnsNames(deps.netns, () => tag.value),
      buildPauseSpec: (input) => stampOwner(deps.buildPauseSpec(input), owner.stateDirId, deps.options.stateDir),
      store: new SandboxStore(deps.options.stateDir, { readOnly }),
      names: new NameRegistrar(),
      locks: new KeyedMutex(),
      emit: (e) => this.emit(e),
      processAlive: deps.processAlive ?? isProcessAlive,
    };
    this.ownerTag = tag;
  }

  get options(): EngineOptions {
    return this.deps.options;
  }

  /** Loads the store and reconciles it with runc and the netns dir; call once before serving. */
  async start(): Promise<RecoveryReport> {
    await this.ctx.cni.load();
    const idTemps: string[] = [];
    const stateDirId = await loadStateDirId(this.deps.options.stateDir, this.ctx.readOnly, (f) => idTemps.push(f));
    this.ctx.owner.stateDirId = stateDirId;
    this.ownerTag.value = stateDirId ? netnsTag(stateDirId) : undefined;
    this.recovery = await recoverSandboxes(this.ctx, { uncleanShutdown: (this.deps.lock?.uncleanPreviousHolders.length ?? 0) > 0 });
    this.recovery.startupGc.unshift(...idTemps.map((path) => gcItem('state-id-temp', { path }, 'deleted (an id write interrupted before its link)')));
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
    return this.ctx.readOnly ? this.refuseReadOnly('run a sandbox') : runSandbox(this.ctx, req, signal);
  }

  stop(id: string): Promise<void> {
    return this.ctx.readOnly ? this.refuseReadOnly('stop a sandbox') : stopSandbox(this.ctx, id);
  }

  async remove(id: string, opts?: RemoveOptions): Promise<void> {
    if (this.ctx.readOnly) return this.refuseReadOnly('remove a sandbox');
    try {
      await removeSandbox(this.ctx, id, opts);
    } catch (e) {
      // a forced remove that gave up: its record is gone, so the engine page keeps saying what is left on the host
      const details = e instanceof PodscopeError && typeof e.details === 'object' ? (e.details as { leftBehind?: unknown }) : {};
      if (opts?.force && Array.isArray(details.leftBehind)) this.forcedLeftovers.push((e as Error).message);
      throw e;
    }
  }

  private async refuseReadOnly(what: string): Promise<never> {
    throw new PodscopeError('FailedPrecondition', `this engine was opened read-only (for a listing or an inspection) and does not ${what}`);
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
        ...this.forcedLeftovers,
      ],
      ...(this.ctx.owner.stateDirId ? { stateDirId: this.ctx.owner.stateDirId } : {}),
      readOnly: this.ctx.readOnly,
      startupGc: this.recovery.startupGc,
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

