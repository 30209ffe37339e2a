/**
 * How a pod is wired, as the kernel has it at `readAt`: every link in the pod's netns and what each leads to on the
 * host — a veth peer, the bridge it is a port of, the parent link of a macvlan/ipvlan/vlan, the host's /32 route to
 * the pod (ptp), the ifb a veth's ingress is redirected to (bandwidth), a link host-device moved in. Nodes, edges and
 * every field of them are read from the kernel (`ip -d -j addr`, `ip -j route`, `bridge -j link`, `tc -j filter`);
 * only `owner` is not: it names the plugin whose recorded ADD result first listed the interface
 * (docs/semantics.md#topology).
 */
import { z } from 'zod';

export const TOPOLOGY_NODE_KINDS = [
  /** a link in a pod's netns that a plugin created there (veth end, macvlan, ipvlan, vlan, vrf, loopback) */
  'pod-if',
  /** a link in a pod's netns that was moved there from the host (the host-device plugin) */
  'host-device',
  /** a veth whose peer is in a pod's netns */
  'host-veth',
  'bridge',
  'ifb',
  /** any other host link a pod's link leads to: a macvlan/ipvlan/vlan parent, and that parent's own veth peer */
  'host-link',
  /** the host's network stack: where a bridge's address or a host route takes packets */
  'host',
] as const;

export const TOPOLOGY_EDGE_KINDS = [
  /** the two ends of a veth pair */
  'veth',
  /** a link and the bridge it is a port of */
  'bridge-port',
  /** a link and the vrf it is enslaved to */
  'vrf-port',
  /** a link and its master of another kind (bond, team, …) */
  'master',
  /** a macvlan/ipvlan/vlan link and the parent (lower) link it sends through */
  'parent',
  /** the host's route to a pod address through a host link (ptp's /32 route); `detail` names the destination */
  'route',
  /** a tc mirred redirect from a link's ingress to another device (bandwidth's ifb) */
  'redirect',
  /** a bridge with an address: the host stack answers there */
  'host-stack',
] as const;

export type TopologyNodeKind = (typeof TOPOLOGY_NODE_KINDS)[number];
export type TopologyEdgeKind = (typeof TOPOLOGY_EDGE_KINDS)[number];

export const TopologyAddressSchema = z.strictObject({
  family: z.union([z.literal(4), z.literal(6)]),
  address: z.string(),
  prefixLen: z.number().int(),
  scope: z.string().optional(),
});

/** Which plugin of which network created what a node or an edge shows, from the sandbox's recorded CNI ADD results. */
export const TopologyOwnerSchema = z.strictObject({
  plugin: z.string(),
  network: z.string(),
  /** the plugin's position in its conflist */
  index: z.number().int().optional(),
});

export const TopologyNodeSchema = z.strictObject({
  /** stable within one picture: "pod:<sandboxId>:<ifname>", "host:<ifname>" or "host" */
  id: z.string(),
  kind: z.enum(TOPOLOGY_NODE_KINDS),
  name: z.string(),
  /** "host" for the host's namespace, else the path of the pod's netns */
  netns: z.string(),
  sandboxId: z.string().optional(),
  ifindex: z.number().int().optional(),
  mac: z.string().optional(),
  mtu: z.number().int().optional(),
  /** operstate as the kernel reports it (UP, DOWN, UNKNOWN, LOWERLAYERDOWN) */
  state: z.string().optional(),
  /** the link's flags include UP */
  adminUp: z.boolean().optional(),
  /** the kernel's link kind: veth, bridge, macvlan, ipvlan, vlan, vrf, ifb; absent for lo and physical devices */
  linkKind: z.string().optional(),
  addresses: z.array(TopologyAddressSchema),
  /** the bridge (or vrf, bond) this link is enslaved to */
  master: z.string().optional(),
  /** bridge port hairpin mode (from `bridge -j link`) */
  hairpin: z.boolean().optional(),
  /** bridge port STP state (forwarding, disabled…) */
  portState: z.string().optional(),
  /** macvlan/ipvlan mode */
  mode: z.string().optional(),
  vlanId: z.number().int().optional(),
  /** host-device: the name the link had on the host (the kernel's ifalias, else the plugin's `device`) */
  originalName: z.string().optional(),
  /** the plugin that created the link (or, for host-device, moved it in) */
  owner: TopologyOwnerSchema.optional(),
});

export const TopologyEdgeSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
  kind: z.enum(TOPOLOGY_EDGE_KINDS),
  /** what the edge stands for in the kernel's words, e.g. "10.75.1.2 dev veth1a2b3c4d" for a route */
  detail: z.string().optional(),
  owner: TopologyOwnerSchema.optional(),
});

export const TopologyPictureSchema = z.strictObject({
  /** when the kernel was read (RFC 3339): the picture is the kernel at this instant, not now */
  readAt: z.string(),
  nodes: z.array(TopologyNodeSchema),
  edges: z.array(TopologyEdgeSchema),
  /** the commands that failed; the picture then lacks what they would have shown */
  errors: z.array(z.string()),
});

export const PodTopologySchema = TopologyPictureSchema.extend({
  id: z.string(),
  /** the node the pod is on, when read across the nodes of this machine (`topology --all-nodes`) */
  node: z.string().optional(),
});

export const NetworkTopologySchema = TopologyPictureSchema.extend({
  network: z.string(),
  /** the sandboxes drawn (ready ones with a netns on this network) */
  sandboxes: z.array(z.strictObject({ id: z.string(), name: z.string() })),
});

export type TopologyAddress = z.infer<typeof TopologyAddressSchema>;
export type TopologyOwner = z.infer<typeof TopologyOwnerSchema>;
export type TopologyNode = z.infer<typeof TopologyNodeSchema>;
export type TopologyEdge = z.infer<typeof TopologyEdgeSchema>;
export type PodTopology = z.infer<typeof PodTopologySchema>;
export type NetworkTopology = z.infer<typeof NetworkTopologySchema>;
