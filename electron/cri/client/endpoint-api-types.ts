/** What a CRI endpoint client offers: SandboxApi and ContainerApi over CRI, plus what the follower and registry use. */
import type { PodscopeError } from '../../../shared/domain/errors';
import type { RowNetworkFacts, SandboxApi, SandboxEvent, SandboxSummary } from '../../../shared/domain/sandbox';
import type { ContainerApi, ContainerSummary } from '../../../shared/domain/container';
import type * as pb from '../generated/runtime_v1';
import type { ContainerStreaming, ForeignSandbox } from '../../engine/api';

export interface CriEndpointApi extends SandboxApi, ContainerApi {
  /** unix:///abs/path */
  readonly address: string;
  readonly socketPath: string;
  /** Connects (Version RPC, once) and returns the peer's Version; every other call does this first. */
  connect(): Promise<pb.VersionResponse>;
  /** the peer is a Podscope daemon (its verbose info carries the full view, incl. plugin trace) */
  isPodscope(): Promise<boolean>;
  /** Version again, to tell whether the endpoint still answers */
  ping(timeoutMs?: number): Promise<pb.VersionResponse>;
  /** true when GetContainerEvents is served (containerd ≥ 1.7, Podscope); probed, not assumed */
  supportsEvents(): Promise<boolean>;
  /** true when the Exec RPC is served (an Exec for no container is refused by name, not UNIMPLEMENTED); probed */
  supportsStreaming(): Promise<boolean>;
  /** GetContainerEvents as SandboxEvents (sandbox events only); onError gets stream failures */
  subscribe(listener: (e: SandboxEvent) => void, onError?: (e: PodscopeError) => void, onContainerEvent?: () => void): () => void;
  /**
   * One ListPodSandbox and nothing else: the summaries without the network facts (ip, host network) that only
   * PodSandboxStatus carries. The endpoint follower lists this way so a list costs one RPC whatever the pod count.
   */
  listOnce(): Promise<SandboxSummary[]>;
  /** One ListContainers and nothing else (no per-container status for exit codes). */
  listContainersOnce(): Promise<ContainerSummary[]>;
  /** One verbose PodSandboxStatus: the facts a list row needs that ListPodSandbox lacks (host ports from its config). */
  networkOf(id: string): Promise<RowNetworkFacts>;
  /**
   * Called when the connection to the runtime drops (the channel leaves READY: a daemon that exits closes its
   * socket). Costs no RPC, so a lost endpoint is noticed at once without pinging it.
   */
  onConnectionLost(listener: () => void): () => void;
  /**
   * A verbose PodSandboxStatus of each pod (these ids, or every listed one): the decoded status and the verbose
   * document as the runtime sent it, for the engine's resolver of foreign pods (engine/foreign/resolve.ts).
   */
  foreignSandboxes(ids?: string[]): Promise<ForeignSandbox[]>;
  /** One non-verbose ContainerStatus: the exit code and reason an exited container's list entry lacks. */
  exitOf(id: string): Promise<Pick<ContainerSummary, 'exitCode' | 'reason'>>;
  /** exec, attach and port-forward through the endpoint's Exec/Attach/PortForward URLs (cri-streaming.ts) */
  readonly streaming: ContainerStreaming;
  close(): void;
}
