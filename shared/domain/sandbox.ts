/** Sandbox view models: what the engine reports and every front door shows. */
import type { SerializedError } from './errors';
import type { IpPreference, PodSandboxConfig, PodSandboxConfigInput, PodSandboxMetadata } from './config';
import type { IpSelection } from './ip-selection';
import type { PortMappingDecision, CniPortMapping } from './portmap';
import type { BandwidthAnalysis } from './bandwidth';
import type { CniConfigView, CniResult, CniRoute, CniDns, InterfaceConfig } from './cni';
import type { LiveNetworkView } from './live';

/** CRI state. */
export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
/** containerd's internal state: new sandboxes are Unknown until the pause task starts. */
export type InternalState = 'Unknown' | 'Ready' | 'NotReady';

export type CniVerb = 'ADD' | 'DEL' | 'CHECK' | 'STATUS' | 'VERSION' | 'GC';

export interface PluginCall {
  network: string;
  ifName: string;
  type: string;
  verb: CniVerb;
  /** index of the plugin in its conflist */
  index: number;
  binary?: string;
  /** the CNI_* environment exactly as sent */
  env: Record<string, string>;
  /** the exact bytes written to the plugin's stdin */
  stdin: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string | null;
  timedOut?: boolean;
}

export type TracePhase = 'run' | 'stop' | 'remove' | 'cleanup' | 'recover';

export interface TraceEntry {
  seq: number;
  phase: TracePhase;
  /** e.g. "netns.create", "cni.add", "cni.plugin", "runc.create", "runc.start" */
  step: string;
  /** a short human label, e.g. "ADD bridge (containerd-net/eth0)" */
  label: string;
  startedAt: string;
  durationMs: number;
  ok: boolean;
  error?: SerializedError;
  plugin?: PluginCall;
  /** free-form facts about the step (netns path, pid, command line…) */
  detail?: Record<string, unknown>;
}

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
}

export interface PauseView {
  containerId: string;
  pid?: number;
  /** the pause process's start time in clock ticks (/proc/<pid>/stat field 22), to tell it from a reused pid */
  startTicks?: number;
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
}

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
}

export interface RuntimeCondition { type: string; status: boolean; reason: string; message: string }

export type SandboxEvent =
  | { type: 'sandbox.added'; id: string; summary: SandboxSummary }
  | { type: 'sandbox.changed'; id: string; summary: SandboxSummary }
  | { type: 'sandbox.removed'; id: string }
  | { type: 'sandbox.progress'; id: string; requestId?: string; entry: TraceEntry }
  | { type: 'cni.config'; config: CniConfigView };

/**
 * The one API every front door exposes. The engine implements it; IPC, WebSocket and the CRI server adapt to it;
 * the renderer calls it through a transport.
 */
export interface SandboxApi {
  run(req: RunSandboxRequest): Promise<{ id: string }>;
  stop(id: string): Promise<void>;
  remove(id: string): Promise<void>;
  status(id: string): Promise<SandboxStatus>;
  list(filter?: SandboxFilter): Promise<SandboxSummary[]>;
  cniConfig(): Promise<CniConfigView>;
  preview(req: RunSandboxRequest): Promise<ConfigPreview>;
  runtimeConditions(): Promise<RuntimeCondition[]>;
  info(): Promise<EngineInfo>;
  /** the sandbox's network as the kernel has it now; FailedPrecondition without a netns (host network, stopped) */
  live(id: string): Promise<LiveNetworkView>;
}

export const toCriState = (s: InternalState): SandboxState => (s === 'Ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY');
