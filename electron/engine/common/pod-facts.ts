/**
 * A pod as the features that measure or use it read it (probe, trace, topology, throughput, the live view, the
 * container verbs): its id and state, its netns, its attachments with their CNI results, its ports (in its config).
 * The engine's own record (pods/record.ts) is built on it; a pod another runtime made would be resolved to the same
 * facts by a lookup of its own, and the features would not tell the difference.
 */
import { isHostNetwork, type PodSandboxConfig } from '../../../shared/domain/config';
import { PodscopeError } from '../../../shared/domain/errors';
import type { IpSelection } from '../../../shared/domain/ip-selection';
import type { InternalState, TraceEntry } from '../../../shared/domain/sandbox';
import type { CniDns, CniRoute, InterfaceConfig } from '../../../shared/domain/cni';
import type { NetworkAttachment } from '../../../shared/domain/sandbox';

export interface PodFacts {
  id: string;
  name: string;
  config: PodSandboxConfig;
  /** the OCI runtime handler its pause and containers run on ("" = the default) */
  runtimeHandler: string;
  /** decimal nanoseconds: newest peers are probed first */
  createdAtNs: string;
  state: InternalState;
  /** undefined for host-network pods */
  netnsPath?: string;
  /** true once the namespace was removed (a stopped pod) */
  netnsClosed?: boolean;
  /** each attachment (network, interface) with its CNI result and cache entry */
  network?: CniSetupResult;
  ip: string;
  additionalIps: string[];
  ipSelection?: IpSelection & { eth0Ips: string[] };
  /** the lifecycle steps, where the engine recorded them: each plugin's ADD result names the links it made */
  trace?: TraceEntry[];
}

/** Finds a pod by its id or a unique id prefix (what crictl passes). */
export interface PodLookup<P extends PodFacts = PodFacts> {
  /** the full id a prefix names, undefined when none or several match */
  resolve(idOrPrefix: string): string | undefined;
  /** the pod, or a NotFound PodscopeError (podNotFound) */
  get(idOrPrefix: string): P;
  /** the pod, or undefined */
  find(idOrPrefix: string): P | undefined;
  all(): P[];
}

/** The one NotFound for a pod, in containerd's words (crictl and critest match on them). */
export function podNotFound(idOrPrefix: string): PodscopeError {
  return new PodscopeError('NotFound', `an error occurred when try to find sandbox ${JSON.stringify(idOrPrefix)}: not found`);
}

/** A ready pod with a netns of its own, or FailedPrecondition saying why there is nothing to `what` (measure, draw…). */
export function readyPod<P extends PodFacts>(pods: PodLookup<P>, idOrPrefix: string, what: string): P & { netnsPath: string } {
  const pod = pods.get(idOrPrefix);
  if (isHostNetwork(pod.config))
    throw new PodscopeError('FailedPrecondition', `sandbox ${pod.id} uses the host network: there is no pod veth to ${what}`);
  if (pod.state !== 'Ready' || !pod.netnsPath || pod.netnsClosed) {
    throw new PodscopeError(
      'FailedPrecondition',
      `sandbox ${pod.id} is not ready (${pod.state}${pod.netnsClosed ? ', network namespace removed' : ''}): nothing to ${what}`,
    );
  }
  return pod as P & { netnsPath: string };
}

/** A pod's network as CNI made it: each attachment (network, interface, result, cache entry) and go-cni's merged view. */
export interface CniSetupResult {
  networks: NetworkAttachment[];
  /** go-cni createResult: interface name → mac/sandbox/IPs (eth0 pre-seeded) */
  interfaces: Record<string, InterfaceConfig>;
  routes: CniRoute[];
  dns: CniDns[];
}
