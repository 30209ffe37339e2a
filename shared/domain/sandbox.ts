/** Sandbox view models: what the engine reports and every front door shows. */
import type { SerializedError } from './errors';
import type { IpPreference, PodSandboxConfig, PodSandboxConfigInput, PodSandboxMetadata } from './config';
import type { IpSelection } from './ip-selection';
import type { PortMappingDecision, CniPortMapping } from './portmap';
import type { BandwidthAnalysis } from './bandwidth';
import type { CniConfigView, CniResult, CniRoute, CniDns, HostLocalDir, InterfaceConfig } from './cni';
import type { LiveNetworkView } from './live';
import type { HostPortConflict, PendingHostPortConflict, ProbeReport } from './probe';
import type { CniCheckReport, CniStatusReport, ThroughputOptions, ThroughputProgress, ThroughputReport } from './measure';
import type { NetworkTopology, PodTopology } from './topology';
import type { TraceEntry } from './trace';

/** CRI state. */
export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
/** containerd's internal state: new sandboxes are Unknown until the pause task starts. */
export type InternalState = 'Unknown' | 'Ready' | 'NotReady';

// the trace types live in trace.ts (measure.ts needs them too, without depending on the sandbox views)
export type { CniVerb, PluginCall, TraceEntry, TracePhase } from './trace';

export interface NetworkAttachment {
  network: string;
  ifName: string;
  source?: string;
  cniVersion: string;
  /** the final ADD result as the last plugin printed it, converted to 1.x */
  result?: CniResult;
  capabilityArgs: Record<string, unknown>;
  cniArgs: Array<[string, string]>;
  cacheFile?: string;
}

export type HostPortView = CniPortMapping;

/**
 * Something a failed run's unwind, a stop or a remove could not release. The sandbox is kept (NOTREADY) while any
 * is left, and stop/remove retry exactly these: for "cni", the DEL of that one plugin.
 */
export interface PendingCleanup {
  /** "cni": one plugin's DEL; otherwise the engine step that is left (the netns is kept while a CNI DEL needs it) */
  kind: 'cni' | 'netns' | 'pause' | 'files' | 'other';
  /** CNI network and interface ("" for other kinds) */
  network: string;
  ifName: string;
  /** plugin type for "cni" (its index in the list in `index`); for other kinds, what the step does */
  plugin: string;
  index?: number;
  /** what it still holds where known: addresses from the partial or cached result, host ports, the netns path */
  holds: string[];
  /** why it is left: the last attempt's error */
  error: string;
  /** when the last attempt failed (RFC 3339) */
  since: string;
}

/** How the pause process ended, as far as the engine could see (it has no subreaper: a reaped zombie keeps no status). */
export interface PauseExit {
  /** when the engine noticed (RFC 3339) */
  at: string;
  exitCode?: number;
  /** e.g. "SIGKILL" */
  signal?: string;
  /** e.g. "exit status not observable: the process was reaped by its parent" */
  note?: string;
  /** when the pause exited (RFC 3339), from its conmon's exit file; absent for a pause no conmon watched */
  finishedAt?: string;
}

export interface SandboxSummary {
  id: string;
  name: string;
  metadata: PodSandboxMetadata;
  state: SandboxState;
  internalState: InternalState;
  /** RFC 3339 */
  createdAt: string;
  /** nanoseconds since the epoch, as a decimal string (CRI created_at) */
  createdAtNs: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtimeHandler: string;
  hostNetwork: boolean;
  ip: string;
  additionalIps: string[];
  hostPorts: HostPortView[];
  bandwidth: { ingress?: string; egress?: string };
  /** what a failed cleanup left behind; present (non-empty) only while something is left */
  cleanupPending?: PendingCleanup[];
  /** why a NOTREADY pod is not ready, in one line (pause exit, pending cleanup, stopped, failed run) */
  notReadyReason?: string;
}

export interface PauseView {
  containerId: string;
  pid?: number;
  /** the pause process's start time in clock ticks (/proc/<pid>/stat field 22), to tell it from a reused pid */
  startTicks?: number;
  /** its conmon's pid; absent for a pause started by an engine from before the pause ran under conmon */
  monitorPid?: number;
  /** runc status (creating, created, running, stopped) or "deleted" / "unknown" */
  status: string;
  bundle?: string;
}

export interface SandboxStatus extends SandboxSummary {
  config: PodSandboxConfig;
  ipPreference: IpPreference;
  netnsPath?: string;
  netnsClosed: boolean;
  pause: PauseView;
  /** what CNI gave eth0, in CNI order, and the choice made from it; undefined for host network or before CNI */
  ipSelection?: IpSelection & { eth0Ips: string[]; alternatives: Record<IpPreference, IpSelection> };
  portMappings: PortMappingDecision[];
  bandwidthAnalysis: BandwidthAnalysis;
  networks: NetworkAttachment[];
  interfaces: Record<string, InterfaceConfig>;
  routes: CniRoute[];
  dns: CniDns[];
  ociSpec?: unknown;
  /** the pause container's seccomp: "unconfined", "runtime/default" or "localhost/<path>" */
  seccomp?: string;
  trace: TraceEntry[];
  lastError?: SerializedError;
  stoppedAt?: string;
  /** set once the pause process was seen dead without a stop */
  pauseExit?: PauseExit;
  /** other ready sandboxes mapping one of this one's host ports, and whose DNAT rule wins (absent from CRI peers) */
  hostPortConflicts?: HostPortConflict[];
}

export interface RemoveOptions {
  force?: boolean;
}

export interface SandboxFilter {
  id?: string;
  state?: SandboxState;
  labelSelector?: Record<string, string>;
  name?: string;
  namespace?: string;
}

export interface RunSandboxRequest {
  config: PodSandboxConfigInput;
  runtimeHandler?: string;
  /** overrides the engine's IP preference for this sandbox */
  ipPreference?: IpPreference;
  /** echoed in progress events so a caller can follow its own request */
  requestId?: string;
}

export interface PluginRuntimeConfigPreview {
  network: string;
  ifName: string;
  /** the conflist file the network came from (undefined for the built-in loopback network) */
  source?: string;
  /** false when the binary was in no bin dir at load time: the run would fail at this plugin */
  binaryFound?: boolean;
  type: string;
  index: number;
  capabilities: string[];
  /** what runtimeConfig would contain; undefined when the plugin receives none */
  runtimeConfig?: Record<string, unknown>;
}

export interface ConfigPreview {
  hostNetwork: boolean;
  plugins: PluginRuntimeConfigPreview[];
  portMappings: PortMappingDecision[];
  bandwidth: BandwidthAnalysis;
  cniArgs: Array<[string, string]>;
  errors: string[];
  /** host ports this config maps that a ready sandbox already holds (the new pod's rule would be shadowed) */
  hostPortConflicts?: PendingHostPortConflict[];
}

/** What a list row needs that ListPodSandbox does not carry: read from one (verbose) PodSandboxStatus per row. */
export type RowNetworkFacts = Pick<SandboxSummary, 'ip' | 'additionalIps' | 'hostNetwork' | 'hostPorts'>;

export interface EngineInfo {
  version: string;
  pid: number;
  uid: number;
  stateDir: string;
  runDir: string;
  netnsDir: string;
  cniConfDir: string;
  cniBinDirs: string[];
  cniCacheDir: string;
  ipPreference: IpPreference;
  /** absent from peers that do not report them (older Podscope daemons over CRI) */
  maxConfNum?: number;
  pluginTimeoutMs?: number;
  /** empty when the engine can do its job; otherwise what is missing and why */
  problems: string[];
  /** the random id in the state dir that marks what this engine owns (runc annotation, netns names) */
  stateDirId?: string;
  /** a read-only engine (CLI pods/inspectp) changes nothing on the host */
  readOnly?: boolean;
  /**
   * What start-up collected that a killed engine had left behind (absent when the peer does not report it, e.g. an
   * older Podscope over CRI or an engine that could not start).
   */
  startupGc?: StartupGcItem[];
  /** the OCI runtimes a pod can ask for by CRI runtime_handler (absent from peers that do not report them) */
  runtimeHandlers?: RuntimeHandlerInfo[];
  /**
   * Where the loaded networks' host-local reservations are kept: the conflist's `ipam.dataDir`, else host-local's
   * own default, whatever the state dir (absent from peers that do not report it)
   */
  hostLocalDirs?: HostLocalDir[];
}

/**
 * Where a pod's container logs go: its config's log_directory decides (kubelet's is /var/log/pods/<ns>_<name>_<uid>,
 * the New sandbox form's default too); a pod without one keeps no container logs. The state dir does not move it.
 */
export const POD_LOG_DIRECTORY_NOTE =
  "a pod's log_directory (the form's default, as kubelet's: /var/log/pods/<namespace>_<name>_<uid>); none: no container logs";

/** One OCI runtime binary the engine can run containers on (docs/semantics.md#runtime-handlers). */
export interface RuntimeHandlerInfo {
  /** the CRI runtime_handler that selects it */
  name: string;
  path: string;
  /** the binary answered `--version` */
  present: boolean;
  /** first line of `--version`, e.g. "crun version 1.8.1" */
  version?: string;
  /** what an empty runtime_handler means */
  default: boolean;
  /** why it cannot be used, naming the package to install */
  problem?: string;
}

export type StartupGcKind = 'cni-cache-temp' | 'record-temp' | 'state-id-temp' | 'netns' | 'runc-container' | 'process' | 'trace-rule';

export interface StartupGcItem {
  kind: StartupGcKind;
  /** a file or netns path (absent for containers) */
  path?: string;
  /** a runc container id, or the pid of a helper process (absent for files) */
  id?: string;
  /** what was done, e.g. "deleted", "unmounted and deleted", "killed and deleted" */
  action: string;
  /** set when the action failed: the item is still there */
  error?: string;
  at: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export type SandboxEvent =
  | { type: 'sandbox.added'; id: string; summary: SandboxSummary }
  | { type: 'sandbox.changed'; id: string; summary: SandboxSummary }
  | { type: 'sandbox.removed'; id: string }
  | { type: 'sandbox.progress'; id: string; requestId?: string; entry: TraceEntry }
  | { type: 'cni.config'; config: CniConfigView }
  /** a throughput measurement in flight (receiver's byte count so far) */
  | { type: 'sandbox.measureProgress'; id: string; progress: ThroughputProgress };

/**
 * The one API every front door exposes. The engine implements it; IPC, WebSocket and the CRI server adapt to it;
 * the renderer calls it through a transport.
 */
export interface SandboxApi {
  run(req: RunSandboxRequest): Promise<{ id: string }>;
  stop(id: string): Promise<void>;
  /**
   * force: when cleanup cannot finish, forget the sandbox anyway after saying what is left behind (in the error it
   * throws and the lifecycle trace). Without it, the sandbox is kept with its pending cleanup.
   */
  remove(id: string, opts?: RemoveOptions): Promise<void>;
  status(id: string): Promise<SandboxStatus>;
  list(filter?: SandboxFilter): Promise<SandboxSummary[]>;
  cniConfig(): Promise<CniConfigView>;
  preview(req: RunSandboxRequest): Promise<ConfigPreview>;
  runtimeConditions(): Promise<RuntimeCondition[]>;
  info(): Promise<EngineInfo>;
  /** the sandbox's network as the kernel has it now; FailedPrecondition without a netns (host network, stopped) */
  live(id: string): Promise<LiveNetworkView>;
  /**
   * measures reachability now with real packets (docs/semantics.md#reachability-probe); with `trace`, each path's own
   * connection is followed through the kernel and explained (docs/semantics.md#probe-trace)
   */
  /** @param opts.dnsName the name the DNS paths ask each nameserver (default: from the pod's search domains) */
  probe(id: string, opts?: { trace?: boolean; dnsName?: string; mtu?: boolean }): Promise<ProbeReport>;
  /** the last probe report of this sandbox (on demand or on ready), or null */
  lastProbe(id: string): Promise<ProbeReport | null>;
  /* Measurements. Optional: a CRI endpoint cannot run them (EndpointCapabilities.measurements says which can). */
  /** bulk TCP each way through the pod's veth, against the tbf read from the kernel */
  throughput?(id: string, opts?: ThroughputOptions): Promise<ThroughputReport>;
  /** the pod's wiring (netns interfaces → veth → bridge → host) read from the kernel now */
  topology?(id: string): Promise<PodTopology>;
  /** every pod on one CNI network and its bridge, read from the kernel now */
  networkTopology?(network: string): Promise<NetworkTopology>;
  /** CNI CHECK of the pod's attachments with the cached result, recorded in its trace */
  cniCheck?(id: string): Promise<CniCheckReport>;
  /** CNI STATUS of every loaded network (1.1.0 lists; older ones are reported as not supporting it) */
  cniStatus?(): Promise<CniStatusReport>;
}

/** The measurements: only an engine in this process can run them (EndpointCapabilities.measurements). */
export type MeasurementVerb = 'throughput' | 'topology' | 'networkTopology' | 'cniCheck' | 'cniStatus';
export type MeasurementApi = Required<Pick<SandboxApi, MeasurementVerb>>;

export const toCriState = (s: InternalState): SandboxState => (s === 'Ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY');
