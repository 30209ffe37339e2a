/**
 * The sandbox engine: one object behind every front door (Electron IPC, browser mode, CLI, CRI socket).
 * Verbs live in their own files; this class holds the state they share and the event fan-out.
 */
import { readFile } from 'node:fs/promises';
import { missingPluginText, type CniConfigView } from '../../../shared/domain/cni';
import { formatIssues, isHostNetwork } from '../../../shared/domain/config';
import { join } from 'node:path';
import type {
  ContainerEvent,
  ContainerFilter,
  ContainerStats,
  ContainerStatusView,
  ContainerSummary,
  CreateContainerRequest,
  ExecSyncResult,
  LinuxContainerResourcesInput,
} from '../../../shared/domain/container';
import { HostCgroupReader } from '../containers/cgroups';
import { RuncContainerRuntime } from '../containers/runtime';
import { ContainerService, type ContainerDeps } from '../containers/service';
import type { ContainerLogOptions } from '../containers/log-reader';
import type { ContainerStreaming } from '../containers/streaming';
import type { LogEntry } from '../../../shared/domain/cri-log';
import { NodeProcessRunner } from '../os/exec';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { analyzePortMappings } from '../../../shared/domain/portmap';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import type {
  ConfigPreview,
  EngineInfo,
  RemoveOptions,
  RunSandboxRequest,
  RuntimeCondition,
  SandboxEvent,
  SandboxFilter,
  SandboxStatus,
  SandboxSummary,
} from '../../../shared/domain/sandbox';
import { noImageStore } from '../images/none';
import type { ImageStore } from '../images/types';
import type { LabApi } from '../../../shared/domain/lab';
import type { StartupGcItem } from '../../../shared/domain/sandbox';
import type { Engine, EngineOptions, SandboxEventListener } from '../options';
import { buildCniOptions } from './cni-options';
import { conflistSuffix } from '../cni/cni-error';
import type { EngineContext } from './context';
import { KeyedMutex } from './keyed-mutex';
import { NameRegistrar } from './name-registrar';
import { recoverSandboxes, type RecoveryReport } from './recover';
import { removeSandbox } from './remove';
import { hostIpFamilyIssues, parseRunConfig, runSandbox } from './run';
import { RunPodSandboxConfigSchema } from '../../../shared/domain/config-checks';
import { isProcessAlive, listSandboxes, processStartTicks, refreshLiveness, sandboxStatus } from './status';
import { liveNetwork } from './live';
import type { LiveNetworkView } from '../../../shared/domain/live';
import type { CniCheckReport, CniStatusReport, ThroughputOptions, ThroughputReport } from '../../../shared/domain/measure';
import type { NetworkTopology, PodTopology } from '../../../shared/domain/topology';
import { measureThroughput } from '../throughput/measure';
import { networkTopology, podTopology } from '../topology/read';
import { cniCheck, cniStatus } from './cni-verbs';
import { every, watchConfDir, type Stoppable } from './watchers';
import { stopSandbox } from './stop';
import { notFoundError, SandboxStore } from './store';
import type { StateDirLock } from './state-lock';
import { loadStateDirId, netnsTag, stampOwner, withOwnedNetnsNames } from './ownership';
import { gcItem } from './startup-gc';
import type { ProbeNet } from '../probe/types';
import type { FlowTracer } from '../trace/flow-tracer';
import { probeSandbox } from '../probe/probe';
import {
  conflictsForNewMappings,
  dnatChainOrder,
  hostPortConflictsFor,
  type HostPortConflict,
  type HostPortHolder,
  type ProbeReport,
} from '../../../shared/domain/probe';
import { toCniPortMappings } from '../../../shared/domain/portmap';
import type { SandboxRecord } from './record';
import { PortGate } from './port-gate';

export const ENGINE_VERSION = '0.1.0';
/** /proc reads only, so cheap enough to run every couple of seconds */
const PAUSE_POLL_MS = 2000;
/** container exits: a /proc read per running container, so a crashed container shows up within a second */
const CONTAINER_POLL_MS = 1000;

export type EngineDeps = Omit<
  EngineContext,
  'store' | 'names' | 'locks' | 'emit' | 'processAlive' | 'readOnly' | 'owner' | 'images' | 'podContainers'
> & {
  processAlive?: EngineContext['processAlive'];
  /** CLI `pods`/`inspectp`: nothing on the host is changed (see EngineContext.readOnly) */
  readOnly?: boolean;
  /** default: an empty store that pulls nothing (engines that only run sandboxes) */
  images?: ImageStore;
  /** the container runtime and cgroup reads (images come from `images`); default: runc under <runDir>/containers/runc */
  containers?: ContainerDeps;
  lock?: StateDirLock;
  /** problems found while setting up (missing runc, not root…), shown by info() */
  problems?: string[];
  /** the reachability probe's touch points; without it probe() is Unimplemented */
  probeNet?: ProbeNet;
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
  /** probes run one at a time and never beside a container start: both want the pod's container ports (port-gate.ts) */
  private readonly portGate = new PortGate();
  private readonly probeAbort = new AbortController();
  private readonly lastProbes = new Map<string, ProbeReport>();
  private readonly containers: ContainerService;

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
      images: deps.images ?? noImageStore(),
    };
    this.ownerTag = tag;
    this.containers = new ContainerService(
      {
        options: deps.options,
        sandboxes: this.ctx.store,
        processAlive: this.ctx.processAlive,
        processStartTicks,
        engineOomScoreAdj: deps.engineOomScoreAdj,
        cleanupTimeoutMs: deps.cleanupTimeoutMs,
      },
      {
        images: this.ctx.images,
        ...(deps.containers ?? {
          runtime: new RuncContainerRuntime({
            runcPath: deps.options.runcPath,
            root: join(deps.options.runDir, 'containers', 'runc'),
            runner: new NodeProcessRunner(),
          }),
          cgroups: new HostCgroupReader(),
        }),
      },
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
    const idTemps: string[] = [];
    const stateDirId = await loadStateDirId(this.deps.options.stateDir, this.ctx.readOnly, (f) => idTemps.push(f));
    this.ctx.owner.stateDirId = stateDirId;
    this.ownerTag.value = stateDirId ? netnsTag(stateDirId) : undefined;
    this.recovery = await recoverSandboxes(this.ctx, { uncleanShutdown: (this.deps.lock?.uncleanPreviousHolders.length ?? 0) > 0 });
    this.recovery.startupGc.unshift(
      ...idTemps.map((path) => gcItem('state-id-temp', { path }, 'deleted (an id write interrupted before its link)')),
    );
    this.recovery.problems.push(...(await this.containers.recover({ readOnly: this.ctx.readOnly })));
    if (!this.ctx.readOnly && this.deps.probeNet?.flowTracer) await this.sweepTraceRules(this.deps.probeNet.flowTracer);
    this.background.push(
      every(CONTAINER_POLL_MS, () => this.containers.poll()),
      watchConfDir(this.deps.options.cniConfDir, () => void this.reloadCniConfig()),
      every(PAUSE_POLL_MS, async () => {
        for (const rec of this.ctx.store.all()) await refreshLiveness(this.ctx, rec);
      }),
    );
    return this.recovery;
  }

  /** TRACE rules a probe --trace of a killed engine left in the raw tables of the host and of our pods' namespaces */
  private async sweepTraceRules(tracer: FlowTracer): Promise<void> {
    const paths = [undefined, ...this.ctx.store.all().flatMap((r) => (r.netnsPath && !r.netnsClosed ? [r.netnsPath] : []))];
    const swept = await tracer.sweep(paths).catch((e: unknown) => {
      this.recovery.problems.push(`start-up GC could not read the raw tables for TRACE rules: ${(e as Error).message}`);
      return { rules: [], monitors: [] };
    });
    this.noteStartupGc([
      ...swept.monitors.map((m) =>
        gcItem('process', { id: String(m.pid) }, 'killed (xtables-monitor --trace of an engine that is gone)', m.error),
      ),
      ...swept.rules.map((r) =>
        gcItem('trace-rule', { path: r.netns, id: r.rule }, `removed (IPv${r.family} raw TRACE rule of an engine that is gone)`, r.error),
      ),
    ]);
  }

  /** Start-up GC done outside the sandbox store (the lab's interrupted runs): logged and shown with the rest. */
  noteStartupGc(items: StartupGcItem[]): void {
    for (const item of items) {
      const what = item.path ?? item.id ?? '';
      this.ctx.log?.(`start-up GC: ${item.kind} ${what}: ${item.error ? `${item.action} failed: ${item.error}` : item.action}`);
      if (item.error) this.recovery.problems.push(`start-up GC could not ${item.action} ${item.kind} ${what}: ${item.error}`);
    }
    this.recovery.startupGc.push(...items);
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
  async run(req: RunSandboxRequest, signal?: AbortSignal): Promise<{ id: string }> {
    if (this.ctx.readOnly) return this.refuseReadOnly('run a sandbox');
    const result = await runSandbox(this.ctx, req, signal);
    if (this.deps.options.probeOnReady && this.deps.probeNet) {
      // in the background: the run's reply never waits for it; close() cancels it
      this.enqueueProbe(result.id, 'onReady').catch(() => undefined);
    }
    return result;
  }

  probe(id: string, opts: { trace?: boolean } = {}): Promise<ProbeReport> {
    return this.enqueueProbe(id, 'onDemand', opts.trace === true);
  }

  async lastProbe(idOrPrefix: string): Promise<ProbeReport | null> {
    const id = this.ctx.store.index.resolve(idOrPrefix);
    if (id === undefined || !this.ctx.store.get(id)) throw notFoundError(idOrPrefix);
    return this.lastProbes.get(id) ?? null;
  }

  private enqueueProbe(id: string, trigger: ProbeReport['trigger'], trace = false): Promise<ProbeReport> {
    const net = this.deps.probeNet;
    if (!net) return Promise.reject(new PodscopeError('Unimplemented', 'this engine has no reachability probe'));
    return this.portGate.withExclusive(async () => {
      if (this.probeAbort.signal.aborted) throw new PodscopeError('Canceled', 'the engine is closing');
      const report = await probeSandbox(this.ctx, net, id, { trigger, signal: this.probeAbort.signal, trace });
      if (this.ctx.store.get(report.sandboxId)) this.lastProbes.set(report.sandboxId, report);
      return report;
    });
  }

  /** Other ready sandboxes mapping one of this one's host ports; the winner read from the real chain when there is a clash. */
  private async hostPortConflicts(rec: SandboxRecord): Promise<HostPortConflict[]> {
    const holders = this.holders();
    const derived = hostPortConflictsFor(rec.id, holders);
    if (derived.length === 0 || !this.deps.probeNet) return derived;
    const rules = await this.deps.probeNet.hostportDnatRules().catch(() => undefined);
    if (!rules) return derived;
    const v4 = dnatChainOrder(rules.v4);
    const v6 = dnatChainOrder(rules.v6);
    return hostPortConflictsFor(rec.id, holders, (port, proto) => {
      const order = v4(port, proto);
      return order.length ? order : v6(port, proto);
    });
  }

  /** the sandboxes that map a host port (hostNetwork ones included: they are reported as such) */
  private holders(): HostPortHolder[] {
    return this.ctx.store.index.hostPortHolders().map((r) => ({
      id: r.id,
      name: r.name,
      createdAtNs: r.createdAtNs,
      ready: r.state === 'Ready',
      hostNetwork: isHostNetwork(r.config),
      hostPorts: toCniPortMappings(r.config.port_mappings),
    }));
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

  async status(id: string): Promise<SandboxStatus> {
    const status = await sandboxStatus(this.ctx, id);
    const rec = this.ctx.store.get(status.id);
    // Only a ready pod with host ports can clash, and only with the other such pods (the read index keeps them):
    // a Status costs the same at 1,000 pods as at 20. The view is shared until the next save, so a clash goes on
    // a copy.
    if (!rec || rec.state !== 'Ready' || !this.ctx.store.index.holdsHostPorts(rec.id)) return status;
    const conflicts = await this.hostPortConflicts(rec);
    return conflicts.length === 0 ? status : { ...status, hostPortConflicts: conflicts };
  }

  list(filter?: SandboxFilter): Promise<SandboxSummary[]> {
    return listSandboxes(this.ctx, filter);
  }

  createContainer(req: CreateContainerRequest): Promise<{ id: string }> {
    return this.containers.createContainer(req);
  }
  async startContainer(id: string): Promise<void> {
    // A probe may hold a responder on a container port inside the pod: the start waits for it, and a probe asked for
    // during the start waits for the start (port-gate.ts).
    return this.portGate.withShared(() => this.containers.startContainer(id));
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
  /** exec, attach and port-forward with live streams (containers/streaming.ts), for the CRI streaming server, IPC and CLI */
  get streaming(): ContainerStreaming {
    return this.containers.streaming;
  }
  /** a container's log lines (containers/log-reader.ts); follow ends once the container exited and the file is drained */
  containerLogs(id: string, opts: ContainerLogOptions = {}): Promise<AsyncIterable<LogEntry>> {
    return this.containers.logs(id, opts);
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
    const config = parseRunConfig(req.config, { checks: false });
    const hostNetwork = isHostNetwork(config);
    const preview: ConfigPreview = {
      hostNetwork,
      plugins: [],
      portMappings: analyzePortMappings(config.port_mappings),
      bandwidth: analyzeBandwidth(config.annotations),
      cniArgs: [],
      errors: [],
      hostPortConflicts: [],
    };
    // what run would refuse before acquiring anything (NUL bytes, a host_ip that is no IP, malformed sysctls, …)
    const checked = RunPodSandboxConfigSchema.safeParse(config);
    if (!checked.success) preview.errors.push(...formatIssues(checked.error));
    if (!hostNetwork) preview.errors.push(...hostIpFamilyIssues(this.ctx, config));
    if (hostNetwork) return preview;
    preview.hostPortConflicts = conflictsForNewMappings(toCniPortMappings(config.port_mappings), this.holders());
    try {
      const opts = buildCniOptions('<sandbox-id>', config);
      preview.cniArgs = opts.args;
      preview.plugins = this.ctx.cni.preview(opts);
      // the first plugin without a binary is where ADD would stop (plugins run in order, networks all at once)
      const missing = preview.plugins.find((p) => p.binaryFound === false);
      if (missing) {
        preview.errors.push(
          `this run would fail at ${missingPluginText({ network: missing.network, source: missing.source, type: missing.type, index: missing.index }, this.deps.options.cniBinDirs)}`,
        );
      }
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
      conditions.push({
        type: 'NetworkReady',
        status: false,
        reason: 'NetworkPluginNotReady',
        message: `Network plugin returns error: ${serializeError(e).message}${conflistSuffix(e)}`,
      });
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
    const key = this.ctx.store.index.resolve(id) ?? id;
    if (this.measuring.has(key))
      throw new PodscopeError('FailedPrecondition', `a throughput measurement of sandbox ${key} is already running`);
    this.measuring.add(key);
    try {
      return await measureThroughput(
        { ctx: this.ctx, meter, signal, onProgress: (progress) => this.emit({ type: 'sandbox.measureProgress', id: key, progress }) },
        id,
        opts,
      );
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
        ...this.forcedLeftovers,
      ],
      ...(this.ctx.owner.stateDirId ? { stateDirId: this.ctx.owner.stateDirId } : {}),
      readOnly: this.ctx.readOnly,
      startupGc: this.recovery.startupGc,
    };
  }

  async close(): Promise<void> {
    for (const b of this.background.splice(0)) b.stop();
    // a probe in flight stops and ends its agents before the engine lets go
    this.probeAbort.abort();
    await this.portGate.idle();
    this.containers.ctx.runtime.close?.();
    this.listeners.clear();
    await this.deps.lock?.release();
  }
}

export async function readOwnOomScoreAdj(): Promise<number> {
  const text = await readFile('/proc/self/oom_score_adj', 'utf8').catch(() => '0');
  return Number.parseInt(text.trim(), 10) || 0;
}
