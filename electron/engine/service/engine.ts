/**
 * The sandbox engine: one object behind every front door (Electron IPC, browser mode, CLI, CRI socket).
 * Each verb lives in its own file, as containerd's CRI server has one per RPC (run.ts, stop.ts, remove.ts,
 * status.ts, preview.ts, runtime-status.ts, probe-queue.ts, throughput.ts, cni-verbs.ts; containers in
 * ../containers); this class composes them and holds the state they share and the event fan-out.
 */
import type { CniConfigView } from '../../../shared/domain/cni';
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
import type { LogEntry } from '../../../shared/domain/cri-log';
import { PodscopeError } from '../../../shared/domain/errors';
import type { LabApi } from '../../../shared/domain/lab';
import type { LiveNetworkView } from '../../../shared/domain/live';
import type { CniCheckReport, CniStatusReport, ThroughputOptions, ThroughputReport } from '../../../shared/domain/measure';
import type { ProbeReport } from '../../../shared/domain/probe';
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
  StartupGcItem,
} from '../../../shared/domain/sandbox';
import type { NetworkTopology, PodTopology } from '../../../shared/domain/topology';
import type { ContainerLogOptions } from '../containers/log-reader';
import { ContainerService, type ContainerDeps } from '../containers/service';
import type { ContainerStreaming } from '../containers/streaming';
import { noImageStore } from '../images/none';
import type { ImageStore } from '../images/types';
import type { EngineOptions } from '../common/options';
import type { Engine, SandboxEventListener } from './engine-api';
import type { ProbeNet } from '../netns/probe-net';
import type { FlowTracer } from '../trace/flow-tracer';
import type { ThroughputMeter } from '../throughput/types';
import type { TopologyDeps } from '../topology/deps';
import { networkTopology, podTopology } from '../topology/read';
import type { TopologyReader } from '../topology/reader';
import { probeTracer } from './probe-tracer';
import { readFile } from 'node:fs/promises';
import { sandboxPaths } from '../runtime/sandbox-files';
import { cniCheck, cniStatus } from '../pods/cni-verbs';
import type { PodsContext } from '../pods/context';
import { KeyedMutex } from '../common/keyed-mutex';
import { buildLiveView, liveNetwork } from '../pods/live';
import { NameRegistrar } from '../common/name-registrar';
import { loadStateDirId, netnsTag, stampOwner, withOwnedNetnsNames } from '../pods/ownership';
import { PortGate } from './port-gate';
import { previewSandbox } from '../pods/preview';
import { ProbeQueue } from './probe-queue';
import { recoverSandboxes, type RecoveryReport } from '../pods/recover';
import { removeSandbox } from '../pods/remove';
import { runSandbox } from '../pods/run';
import { engineInfo, runtimeConditions } from './engine-info';
import { gcItem } from '../pods/startup-gc';
import type { StateDirLock } from './state-lock';
import { listSandboxes, refreshLiveness, sandboxStatusWithClashes } from '../pods/status';
import { processStartTicks } from '../common/proc';
import { stopSandbox } from '../pods/stop';
import { SandboxStore } from '../pods/store';
import { ThroughputRuns } from './throughput-runs';
import { every, everyNth, watchConfDir, type Stoppable } from './watchers';
import { walkYielding } from '../common/walk';

export { ENGINE_VERSION } from './engine-info';
/** /proc reads only, so cheap enough to run every couple of seconds */
const PAUSE_POLL_MS = 2000;
/** container exits: a /proc read per running container, so a crashed container shows up within a second */
const CONTAINER_POLL_MS = 1000;
/** every how many background rounds the liveness look is the exact one (about every 15 s for containers, 30 s for pauses) */
const EXACT_ROUND_EVERY = 15;

/**
 * Every touch point the engine runs on. The ones that reach the host (the container runtime and its cgroups, process
 * liveness) are required: an engine built over fakes that forgot one must not quietly get the real runc or /proc.
 * index.ts fills them with the real ones; testkit/fakes/test-engine.ts with fakes.
 */
export type EngineDeps = Omit<PodsContext, 'store' | 'names' | 'locks' | 'emit' | 'readOnly' | 'owner' | 'podContainers'> & {
  /** CLI `pods`/`inspectp`: nothing on the host is changed (see PodsContext.readOnly) */
  readOnly?: boolean;
  /** default: an empty store that pulls nothing (engines that only run sandboxes) */
  images?: ImageStore;
  /** the container runtimes and cgroup reads (images come from `images`) */
  containers: Omit<ContainerDeps, 'images'>;
  /** bulk transfers through the pod's veth (absent: throughput is not available here) */
  throughputMeter?: ThroughputMeter;
  /** `ip -j`/`bridge -j` reads of the host and a netns (absent: topology is not available here) */
  topologyReader?: TopologyReader;
  /** follows single connections through the kernel for probe --trace (absent: tracing is not available here) */
  flowTracer?: FlowTracer;
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
  /** set by createEngine: another runtime's pods are measured beside the engine, never through its records */
  measureForeign?: Engine['measureForeign'];
  /** set by createEngine: paths between the nodes of this machine, beside the engine as measureForeign */
  measureNodes?: Engine['measureNodes'];
  private readonly ctx: PodsContext;
  private recovery: RecoveryReport = { loaded: 0, problems: [], orphanContainers: [], startupGc: [] };
  private readonly background: Stoppable[] = [];
  /** what forced removes left on the host in this process's lifetime (shown by info()) */
  private readonly forcedLeftovers: string[] = [];
  /** the netns name tag, known once start() has read the state dir id */
  private readonly ownerTag: { value: Buffer | undefined };
  /** probes run one at a time and never beside a container start: both want the pod's container ports (port-gate.ts) */
  private readonly portGate = new PortGate();
  private readonly probes: ProbeQueue;
  private readonly throughputRuns: ThroughputRuns;
  private readonly containers: ContainerService;
  private readonly images_: ImageStore;
  private readonly topologyDeps: TopologyDeps;

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
    };
    this.images_ = deps.images ?? noImageStore();
    const pods = this.ctx.store.pods;
    this.ownerTag = tag;
    this.containers = new ContainerService(
      {
        options: deps.options,
        pods,
        processAlive: this.ctx.processAlive,
        ...(this.ctx.processExists && { processExists: this.ctx.processExists }),
        processStartTicks,
        engineOomScoreAdj: deps.engineOomScoreAdj,
        cleanupTimeoutMs: deps.cleanupTimeoutMs,
      },
      { ...deps.containers, images: this.images_ },
      (e) => this.emit(e),
    );
    this.ctx.podContainers = this.containers;
    const netnsClosed = (path: string) => this.ctx.netns.isClosed(path);
    this.probes = new ProbeQueue(
      deps.probeNet && {
        pods,
        net: deps.probeNet,
        // the store's own record: refreshLiveness saves only the record the store holds
        refreshLiveness: async (pod) => {
          const rec = this.ctx.store.get(pod.id);
          if (rec) await refreshLiveness(this.ctx, rec, { exact: true });
        },
        netnsClosed,
        cniConfig: () => this.ctx.cni.config(),
        // the file written for the pod (sandbox-files.ts): its nameservers when dns_config names none
        resolvConf: (pod) => readFile(sandboxPaths(deps.options.stateDir, '', pod.id).resolvConf, 'utf8').catch(() => undefined),
        // the containers' EXPOSEd ports: peers connect to them beside the port mappings' container ports
        declaredPorts: (pod) => this.containers.declaredPorts(pod.id),
        ...(deps.flowTracer && { tracer: probeTracer(deps.flowTracer) }),
      },
      this.portGate,
    );
    this.throughputRuns = new ThroughputRuns(
      deps.throughputMeter && {
        pods,
        meter: deps.throughputMeter,
        netnsClosed,
        liveView: async (pod, hostDevices, signal) =>
          buildLiveView(pod, await this.ctx.liveReader.read(pod.netnsPath, hostDevices, signal), new Date()),
      },
      (e) => this.emit(e),
    );
    this.topologyDeps = { pods, reader: deps.topologyReader };
  }

  get options(): EngineOptions {
    return this.deps.options;
  }

  get images(): ImageStore {
    return this.images_;
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
    if (!this.ctx.readOnly && this.deps.flowTracer) await this.sweepTraceRules(this.deps.flowTracer);
    // Each round takes the cheap look (status.ts runsUnderLiveMonitor), which already falls back to the exact one for
    // anything whose conmon or pid is gone; every EXACT_ROUND_EVERY-th round takes the exact look for all, which
    // catches the one case the cheap look cannot: both pids reused (pid_max is 32768 on this kind of host).
    const exactContainerRound = everyNth(EXACT_ROUND_EVERY);
    const exactPauseRound = everyNth(EXACT_ROUND_EVERY);
    this.background.push(
      every(CONTAINER_POLL_MS, () => this.containers.poll({ exact: exactContainerRound() })),
      watchConfDir(this.deps.options.cniConfDir, () => void this.reloadCniConfig()),
      every(PAUSE_POLL_MS, async () => {
        const exact = exactPauseRound();
        await walkYielding(this.ctx.store.all(), (rec) => refreshLiveness(this.ctx, rec, { exact }));
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
        gcItem('process', { id: String(m.pid) }, 'killed (nft monitor trace of an engine that is gone)', m.error),
      ),
      ...swept.rules.map((r) =>
        gcItem(
          'trace-rule',
          { path: r.netns, id: r.rule },
          r.rule.startsWith('table ')
            ? `deleted (the empty raw table a trace of an engine that is gone created)`
            : r.rule.startsWith('tracefs ')
              ? 'removed (the skb:kfree_skb tracefs instance of a trace of an engine that is gone)'
              : `removed (IPv${r.family} raw TRACE rule of an engine that is gone)`,
          r.error,
        ),
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
    if (this.deps.options.probeOnReady && this.probes.available) {
      // in the background: the run's reply never waits for it; close() cancels it
      this.probes.enqueue(result.id, 'onReady').catch(() => undefined);
    }
    return result;
  }

  probe(id: string, opts: { trace?: boolean; dnsName?: string; mtu?: boolean } = {}): Promise<ProbeReport> {
    return this.probes.enqueue(id, 'onDemand', opts.trace === true, {
      ...(opts.dnsName ? { dnsName: opts.dnsName } : {}),
      ...(opts.mtu === false ? { mtu: false } : {}),
    });
  }

  lastProbe(idOrPrefix: string): Promise<ProbeReport | null> {
    return this.probes.lastOf(idOrPrefix, this.ctx.store.pods);
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
    return sandboxStatusWithClashes(this.ctx, this.deps.probeNet, id);
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
  /** what removed containers leave finishes after the reply (containers/remove.ts): this waits for it */
  removalsFinished(): Promise<void> {
    return this.containers.removalsFinished();
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
    return previewSandbox(this.ctx, req);
  }

  runtimeConditions(): Promise<RuntimeCondition[]> {
    return runtimeConditions(this.ctx, this.deps.problems ?? []);
  }

  live(id: string): Promise<LiveNetworkView> {
    return liveNetwork(this.ctx, id);
  }

  throughput(id: string, opts: ThroughputOptions = {}, signal?: AbortSignal): Promise<ThroughputReport> {
    return this.throughputRuns.run(id, opts, signal);
  }

  topology(id: string): Promise<PodTopology> {
    return podTopology(this.topologyDeps, id);
  }

  networkTopology(network: string): Promise<NetworkTopology> {
    return networkTopology(this.topologyDeps, network);
  }

  cniCheck(id: string): Promise<CniCheckReport> {
    return cniCheck(this.ctx, id);
  }

  cniStatus(): Promise<CniStatusReport> {
    return cniStatus(this.ctx);
  }

  async info(): Promise<EngineInfo> {
    return engineInfo(this.ctx, { problems: this.deps.problems ?? [], recovery: this.recovery, forcedLeftovers: this.forcedLeftovers });
  }

  async close(): Promise<void> {
    for (const b of this.background.splice(0)) b.stop();
    // a probe in flight stops and ends its agents before the engine lets go
    this.probes.close();
    // and the host-side agents kept for the next probe are ended: nothing the engine started stays behind it
    await this.deps.probeNet?.dispose?.();
    await this.portGate.idle();
    await this.containers.removalsFinished();
    this.listeners.clear();
    await this.deps.lock?.release();
  }
}
