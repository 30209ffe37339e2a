/**
 * A node: one CRI runtime on this machine and the namespaces it lives in. On a workstation the nodes of a kind, k3d
 * or minikube cluster are runtimes in namespaces of their own; the host's containerd or a Podscope daemon is a node in
 * the host's namespaces. Discovery reads them from /proc and asks each runtime its CRI Version.
 */
import type { PathTrace, ProbeVerdict } from './probe';

/** a namespace as the kernel names it (`net:[4026531840]`) and whether it is the host's (Podscope's own) */
export interface NodeNamespace {
  id: string;
  host: boolean;
}

export interface NodeAddress {
  ifName: string;
  /** address/prefix */
  cidr: string;
}

export interface NodePodSubnet {
  cidr: string;
  /** where it was read: a host-local range of the CNI config, or a connected route on the CNI bridge */
  source: 'cni-config' | 'route';
  /** the CNI network (config) or the device (route) */
  from: string;
}

export interface NodeRoute {
  dst: string;
  via?: string;
  dev?: string;
}

export interface NodeView {
  /** the runtime's hostname in its UTS namespace; in the host's UTS namespace a stable name derived from the runtime and endpoint */
  name: string;
  /** how the name was got */
  nameFrom: 'uts-hostname' | 'derived';
  /** the CRI socket as Podscope reaches it: through /proc/<pid>/root/… when the runtime has its own mount namespace */
  endpoint: string;
  /** the socket's path as the runtime sees it */
  socketPath: string;
  /** how it was found */
  foundBy: 'well-known' | 'process';
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
  /** the runtime's process in the host's pid namespace, and its pid in its own when that differs */
  pid?: number;
  nsPid?: number;
  namespaces: { net: NodeNamespace; mnt: NodeNamespace; pid: NodeNamespace; uts: NodeNamespace };
  /** the node's addresses in its netns (not loopback, not the pods' bridges) */
  addresses: NodeAddress[];
  podSubnets: NodePodSubnet[];
  /** routes via a gateway to other prefixes than the default (kindnet's routes to the other nodes' pod subnets) */
  routes: NodeRoute[];
  /** what could not be read, said plainly (the node is still listed) */
  problems: string[];
}

/** a CRI endpoint that did not answer as one (listed so a socket that is not a runtime is not silently skipped) */
export interface NodeCandidateRefused {
  endpoint: string;
  pid?: number;
  reason: string;
}

/** one pod of a probe matrix: a row and a column */
export interface ProbeMatrixPod {
  id: string;
  /** namespace/name */
  name: string;
  node: string;
  /** the address every other pod connected to (its eth0 primary) */
  ip: string;
}

/** one cell: pod `from` connected to pod `to`, with a real packet and the probe's nonce */
export interface ProbeMatrixCell {
  from: string;
  to: string;
  fromNode: string;
  toNode: string;
  verdict: ProbeVerdict;
  rttMs?: number;
  note: string;
  /** why it failed (a missing route on a node, a rule in a node's chain), or with a trace one sentence from the kernel */
  why?: string;
  trace?: PathTrace;
}

/**
 * Every pod × every pod of the chosen nodes (`podscope probe --matrix`): rows and columns grouped by node, one cell per
 * ordered pair, each a real connect judged as a probe path is.
 */
export interface ProbeMatrix {
  measuredAt: string;
  durationMs: number;
  nodes: string[];
  /** grouped by node, in `nodes` order */
  pods: ProbeMatrixPod[];
  cells: ProbeMatrixCell[];
  /** what kept a node, a pod or a cell from being measured */
  errors: string[];
  traced?: boolean;
}

export interface NodeDiscovery {
  nodes: NodeView[];
  refused: NodeCandidateRefused[];
}
