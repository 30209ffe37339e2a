/**
 * How a pod is wired to the host, as the kernel has it: the netns interfaces, the veth peer on the host,
 * the bridge it is a port of, the ifb the bandwidth plugin adds, and the host. Everything here is read live with
 * `ip -j -d link/addr` (host and netns) and `bridge -j link`; nothing comes from the CNI result.
 */

export type TopologyNodeKind = 'pod-if' | 'host-veth' | 'bridge' | 'ifb' | 'host';

export interface TopologyAddress {
  family: 4 | 6;
  address: string;
  prefixLen: number;
  scope?: string;
}

export interface TopologyNode {
  /** stable within one picture: "pod:<sandboxId>:<ifname>" or "host:<ifname>" */
  key: string;
  kind: TopologyNodeKind;
  name: string;
  /** "pod" nodes live in a sandbox's netns, the rest in the host's */
  namespace: 'pod' | 'host';
  sandboxId?: string;
  ifindex?: number;
  mac?: string;
  mtu?: number;
  /** operstate as the kernel reports it (UP, DOWN, UNKNOWN, LOWERLAYERDOWN) */
  state?: string;
  /** link flags include UP */
  adminUp?: boolean;
  linkKind?: string;
  addresses: TopologyAddress[];
  /** the bridge this link is a port of */
  master?: string;
  /** bridge port hairpin mode (from `bridge -j link`) */
  hairpin?: boolean;
  /** bridge port STP state (forwarding, disabled…) */
  portState?: string;
}

export type TopologyEdgeKind = 'veth' | 'bridge-port' | 'ifb-redirect' | 'host-stack';

export interface TopologyEdge {
  from: string;
  to: string;
  kind: TopologyEdgeKind;
}

export interface PodTopology {
  id: string;
  /** when the kernel was read (RFC 3339) */
  measuredAt: string;
  nodes: TopologyNode[];
  edges: TopologyEdge[];
  /** commands that failed; the picture then lacks what they would have shown */
  errors: string[];
}

export interface NetworkTopology {
  network: string;
  measuredAt: string;
  /** the sandboxes drawn (ready ones with a netns on this network) */
  sandboxes: Array<{ id: string; name: string }>;
  nodes: TopologyNode[];
  edges: TopologyEdge[];
  errors: string[];
}
