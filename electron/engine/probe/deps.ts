/**
 * What the reachability probe needs from the rest of the engine; service/ fills it. The packet trace is among them,
 * declared here in the shapes the probe uses, so the probe does not import trace/: structural typing checks, where
 * service/ hands over the real tracer, that trace/'s types fit these.
 */
import type { CniConfigView } from '../../../shared/domain/cni';
import type { ProbePath, TraceStep } from '../../../shared/domain/probe';
import type { PodFacts, PodLookup } from '../common/pod-facts';
import type { RouteGetQuery } from '../kernel/route-get';
import type { ConnectOutcome, ProbeNet } from '../netns/probe-net';

export interface ProbeDeps {
  pods: PodLookup;
  /** the agents, connects and DNAT order */
  net: ProbeNet;
  /** re-reads whether the pod's pause still runs (a pause that died since the last poll must not be probed as ready) */
  refreshLiveness(pod: PodFacts): Promise<void>;
  /** the namespace pinned at this path is gone */
  netnsClosed(path: string): Promise<boolean>;
  /** the networks loaded from the conf dir: the chain of an attachment whose cache entry is gone */
  cniConfig(): CniConfigView;
  /** the pod's resolv.conf as written for it (undefined: none, or unreadable): the DNS paths' servers without dns_config */
  resolvConf?(pod: PodFacts): Promise<string | undefined>;
  /**
   * the ports the pod's containers declare (their images' EXPOSE), beside its port mappings' container ports: peers
   * connect to each (plan.ts planPeerPorts); undefined where containers are not known (another runtime's pods, whose
   * kubelet lists every container port among the port mappings anyway)
   */
  declaredPorts?(pod: PodFacts): Promise<DeclaredPort[]>;
  /** follows each connect through the kernel (probe --trace); undefined where the kernel cannot be asked */
  tracer?: ProbeTracer;
  /**
   * the pods' node when it is not this host (a kind node's runtime): the net (a ProbeNet placed there) already does
   * its host-side work in the node's netns; the traces cross that netns too, and each step names the node
   */
  node?: ProbeNode;
}

/** a port a container of the pod declares */
export interface DeclaredPort {
  port: number;
  /** lower case: tcp, udp, sctp */
  proto: string;
  /** the container's name (its metadata name) */
  container: string;
}

export interface ProbeNode {
  name: string;
  /** its netns as this process reaches it (/proc/<runtime pid>/ns/net) */
  netnsPath: string;
}

/** a netns a traced flow crosses: "host" or a pod id */
export interface FlowNetns {
  key: string;
  /** the pinned netns path (undefined: the host's) */
  path?: string;
  label: string;
  /** the node it belongs to, when that is not this host */
  node?: string;
  /** a pod's: the netns its veth peer and bridge are in (its node's; undefined: the host's) */
  parent?: { key: string; path?: string; label: string };
}

/** one connect to follow, in the shape the packet trace takes it (trace/flow-types.ts FlowSpec) */
export interface FlowToTrace {
  sport: number;
  family: 4 | 6;
  dst: string;
  dport: number;
  /** the flow's protocol (default tcp; udp for a DNS query) */
  proto?: 'tcp' | 'udp';
  /** every netns the flow crosses, the sender's first */
  netns: FlowNetns[];
  /** the route decisions to read afterwards, in path order */
  routes: Array<{ netns: FlowNetns; query: RouteGetQuery; purpose: string; reply?: boolean }>;
}

/** what the trace recorded of one flow: the probe hands it back to explain() and reads only what it lacked */
export interface TracedFlow {
  missing: string[];
  /** this flow's own packets of every hop's capture, as one pcapng */
  capture?: { pcapng: Buffer; interfaces: string[]; packets: number };
}

export interface ProbeTracer {
  /** a source port no other trace of this process is using; released once the trace finished */
  allocatePort(avoid?: Set<number>): number;
  releasePort(port: number): void;
  begin(
    flows: FlowToTrace[],
    signal?: AbortSignal,
  ): Promise<{
    readonly missing: string[];
    capture?: { pcapng: Buffer; interfaces: string[]; packets: number };
    finish(): Promise<TracedFlow[]>;
  }>;
  /** the path's steps, the way out and back, and one sentence saying why */
  explain(input: {
    flow: FlowToTrace;
    record: TracedFlow;
    path: ProbePath;
    outcome: ConnectOutcome;
    /** every pod involved, to name who installed each rule */
    known: Array<{ id: string; network: string | undefined; ips: string[] }>;
    podName(id: string): string | undefined;
    /** the netns whose answer means reachable */
    target: FlowNetns;
    /** what this flow's trace lacked: a gap that could hide the cause makes the explanation partial */
    missing: string[];
  }): { steps: TraceStep[]; why: string; partial?: true };
}
