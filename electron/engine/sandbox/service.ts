/**
 * The sandbox engine: one object behind every front door (Electron IPC, browser mode, CLI, CRI socket).
 * Verbs live in their own files; this class holds the state they share and the event fan-out.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerEvent, ContainerFilter, ContainerStats, ContainerStatusView, ContainerSummary, CreateContainerRequest, ExecSyncResult, LinuxContainerResourcesInput } from '../../../shared/domain/container';
import { HostCgroupReader } from '../containers/cgroups';
import { RuncContainerRuntime } from '../containers/runtime';
import { ContainerService, type ContainerDeps } from '../containers/service';
import { NodeProcessRunner } from '../os/exec';
import type { CniConfigView } from '../../../shared/domain/cni';
import { isHostNetwork } from '../../../shared/domain/config';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { analyzePortMappings } from '../../../shared/domain/portmap';
import { serializeError } from '../../../shared/domain/errors';
import type { ConfigPreview, EngineInfo, RunSandboxRequest, RuntimeCondition, SandboxEvent, SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import { noImageStore } from '../images/none';
import type { ImageStore } from '../images/types';
import type { Engine, EngineOptions, SandboxEventListener } from '../options';
import { buildCniOptions } from './cni-options';
import type { EngineContext } from './context';
import { KeyedMutex } from './keyed-mutex';
import { NameRegistrar } from './name-registrar';
import { recoverSandboxes, type RecoveryReport } from './recover';
import { removeSandbox } from './remove';
import { parseRunConfig, runSandbox } from './run';
import { isProcessAlive, listSandboxes, processStartTicks, refreshLiveness, sandboxStatus } from './status';
import { liveNetwork } from './live';
import type { LiveNetworkView } from '../../../shared/domain/live';
import { every, watchConfDir, type Stoppable } from './watchers';
import { stopSandbox } from './stop';
import { SandboxStore } from './store';
import type { StateDirLock } from './state-lock';

export const ENGINE_VERSION = '0.1.0';
/** /proc reads only, so cheap enough to run every couple of seconds */
const PAUSE_POLL_MS = 2000;
/** container exits: a /proc read per running container, so a crashed container shows up within a second */
const CONTAINER_POLL_MS = 1000;

export type EngineDeps = Omit<EngineContext, 'store' | 'names' | 'locks' | 'emit' | 'processAlive' | 'images' | 'podContainers'> & {
  processAlive?: EngineContext['processAlive'];
  /** default: an empty store that pulls nothing (engines that only run sandboxes) */
  images?: ImageStore;
  /** the container runtime and cgroup reads (images come from `images`); default: runc under <runDir>/containers/runc */
  containers?: ContainerDeps;
  lock?: StateDirLock;
  /** problems found while setting up (missing runc, not root…), shown by info() */
  problems?: string[];
};

export class SandboxEngine implements Engine {
  private readonly listeners = new Set<SandboxEventListener>();
  private readonly ctx: EngineContext;
  private recovery: RecoveryReport = { loaded: 0, problems: [], orphanContainers: [] };
  private readonly background: Stoppable[] = [];
  private readonly containers: ContainerService;

  constructor(private readonly deps: EngineDeps) {
    this.ctx = {
      ...deps,
      store: new SandboxStore(deps.options.stateDir),
      names: new NameRegistrar(),
      locks: new KeyedMutex(),
      emit: (e) => this.emit(e),
      processAlive: deps.processAlive ?? isProcessAlive,
      images: deps.images ?? noImageStore(),
    };
    this.containers = new ContainerService(
      {
        options: deps.options,
        sandboxes: this.ctx.store,
        processAlive: this.ctx.processAlive,
        processStartTicks,
        engineOomScoreAdj: deps.engineOomScoreAdj,
        cleanupTimeoutMs: deps.cleanupTimeoutMs,
      },
      { images: this.ctx.images, ...(deps.containers ?? { runtime: new RuncContainerRuntime({ runcPath: deps.options.runcPath, root: join(deps.options.runDir, 'containers', 'runc'), runner: new NodeProcessRunner() }), cgroups: new HostCgroupReader() }) },
      (e) => this.emit(e),
    );
    this.ctx.podContainers = this.containers;
  }

  get options(): EngineOptions {
    return this.deps.options;
  }

  get images(): ImageStore {
    return this.ctx.images;
  }

  /** Loads the store and reconciles it with runc and the netns dir; call once before serving. */
  async start(): Promise<RecoveryReport> {
    await this.ctx.cni.load();
    this.recovery = await recoverSandboxes(this.ctx);
    this.recovery.problems.push(...(await this.containers.recover()));
    this.background.push(
      every(CONTAINER_POLL_MS, () => this.containers.poll()),
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

  private emit(e: SandboxEvent | ContainerEvent): void {
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

  createContainer(req: CreateContainerRequest): Promise<{ id: string }> {
    return this.containers.createContainer(req);
  }
  startContainer(id: string): Promise<void> {
    return this.containers.startContainer(id);
  }
  stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    return this.containers.stopContainer(id, timeoutSeconds);
  }
  removeContainer(id: string): Promise<void> {
    return this.containers.removeContainer(id);
  }
  containerStatus(id: string): Promise<ContainerStatusView> {
    return this.containers.containerStatus(id);
  }
  listContainers(filter?: ContainerFilter): Promise<ContainerSummary[]> {
    return this.containers.listContainers(filter);
  }
  execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    return this.containers.execSync(id, cmd, timeoutSeconds);
  }
  updateContainerResources(id: string, resources: LinuxContainerResourcesInput): Promise<void> {
    return this.containers.updateContainerResources(id, resources);
  }
  containerStats(id: string): Promise<ContainerStats> {
    return this.containers.containerStats(id);
  }
  listContainerStats(filter?: Omit<ContainerFilter, 'state'>): Promise<ContainerStats[]> {
    return this.containers.listContainerStats(filter);
  }
  reopenContainerLog(id: string): Promise<void> {
    return this.containers.reopenContainerLog(id);
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
      ],
    };
  }

  async close(): Promise<void> {
    for (const b of this.background.splice(0)) b.stop();
    this.containers.ctx.runtime.close?.();
    this.listeners.clear();
    await this.deps.lock?.release();
  }
}

export async function readOwnOomScoreAdj(): Promise<number> {
  const text = await readFile('/proc/self/oom_score_adj', 'utf8').catch(() => '0');
  return Number.parseInt(text.trim(), 10) || 0;
}

