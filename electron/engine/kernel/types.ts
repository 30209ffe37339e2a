/**
 * Kernel state of one network namespace, as the engine reads it: links with their addresses, routes of every table,
 * policy rules, qdiscs, bridge ports, sysctls and netfilter rules of both families. Field names say what the value
 * is, not what iproute2 calls it; values are as the kernel reports them (no interpretation beyond the parse).
 */

export type IpFamily = 4 | 6;

export interface KernelAddress {
  family: IpFamily;
  address: string;
  prefixLen: number;
  /** host, link, global, … */
  scope?: string;
}

export interface KernelLink {
  ifindex: number;
  name: string;
  /** veth, bridge, ifb, … (`linkinfo.info_kind`); undefined for a device without a kind (lo, a physical NIC) */
  kind?: string;
  /** the kind of the master it is enslaved to (bridge, bond, …) */
  slaveKind?: string;
  /** the bridge (or bond) this link is a port of */
  master?: string;
  /** a bridge port's hairpin mode, when it is one */
  hairpin?: boolean;
  /**
   * The other link this one names (`link_index`), when that link lives in another namespace: a veth's peer, or the
   * parent (lower) link of a macvlan, ipvlan or vlan
   */
  peerIfindex?: number;
  /** the same link's name (`link`), when it lives in this namespace */
  peerName?: string;
  /** the id (in this namespace's numbering) of the namespace the peer lives in */
  peerNetnsId?: number;
  /** the link's alias (`ifalias`): host-device keeps a moved link's original name there */
  alias?: string;
  /** macvlan/ipvlan mode (bridge, private, l2, l3, …) */
  mode?: string;
  /** a vlan link's VLAN id */
  vlanId?: number;
  /** a vrf link's routing table */
  vrfTable?: number;
  /** UP, LOWER_UP, BROADCAST, … as the kernel flags the link */
  flags?: string[];
  /** operational state: UP, DOWN, UNKNOWN, LOWERLAYERDOWN, … */
  state?: string;
  mtu?: number;
  mac?: string;
  addresses: KernelAddress[];
}

export interface KernelRoute {
  family: IpFamily;
  /** "main", "local", or a number as text */
  table: string;
  /** unicast routes carry none; local, broadcast, multicast, blackhole, … */
  type?: string;
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
  scope?: string;
  metric?: number;
  prefsrc?: string;
  /** the route's `mtu` metric (`ip route … mtu N`), when it has one */
  mtu?: number;
}

export interface KernelRule {
  family: IpFamily;
  priority: number;
  /** "all" or a CIDR */
  from: string;
  to?: string;
  iif?: string;
  oif?: string;
  fwmark?: string;
  table?: string;
  /** what a rule does other than look up a table (blackhole, unreachable, goto, …) */
  action?: string;
}

export interface KernelQdisc {
  dev: string;
  kind: string;
  handle?: string;
  /** attached at the device's root; otherwise `parent` says where */
  root: boolean;
  parent?: string;
  /** tbf and other shapers: tc reports rates in bytes per second */
  rateBytesPerSecond?: number;
  burstBytes?: number;
  latencyMicroseconds?: number;
}

export interface BridgePort {
  ifindex: number;
  name: string;
  master?: string;
  /** forwarding, learning, blocking, … */
  state?: string;
  hairpin?: boolean;
}

/** One action of a tc filter; `mirred` redirects or mirrors the packet to another device. */
export interface KernelFilterAction {
  kind: string;
  /** mirred: redirect or mirror */
  action?: string;
  /** mirred: egress or ingress of the target device */
  direction?: string;
  /** mirred: the device packets go to */
  toDev?: string;
}

/** A tc filter with its actions, as `tc -j filter show dev <dev> ingress` lists it. */
export interface KernelFilter {
  dev: string;
  /** "ffff:" for a device's ingress qdisc */
  parent?: string;
  /** u32, bpf, matchall, … */
  kind: string;
  pref?: number;
  actions: KernelFilterAction[];
}

export interface NetfilterChain {
  name: string;
  /** a built-in chain's policy (ACCEPT, DROP); undefined for a user-defined chain */
  policy?: string;
}

export interface NetfilterRule {
  chain: string;
  /** the rule as `iptables -S` and `iptables-save` print it: `-A <chain> <match and target>` */
  spec: string;
  /** the words after `-A <chain>`, quotes removed (argv for `iptables -D <chain> …`) */
  args: string[];
  /** the text of its first `-m comment --comment`, unquoted */
  comment?: string;
  /** the `-j` (or `-g`) target */
  target?: string;
}

export interface NetfilterTable {
  family: IpFamily;
  /** filter, nat, mangle, raw, security */
  name: string;
  chains: NetfilterChain[];
  rules: NetfilterRule[];
}

/** What to read. Everything not asked for comes back empty, so a caller pays only for what it uses. */
export interface KernelQuery {
  /** links with their addresses and link details */
  links?: boolean;
  /** routes of every table, both families */
  routes?: boolean;
  /** policy routing rules, both families */
  rules?: boolean;
  /** every device's qdiscs, or only those of the devices named (a device that does not exist is an error) */
  qdiscs?: boolean | { devices: string[] };
  /** bridge ports (state, hairpin) */
  bridgePorts?: boolean;
  /** the tc filters on the ingress of the devices named (a device that does not exist is an error) */
  ingressFilters?: { devices: string[] };
  /** iptables and ip6tables rules: every table, or only the tables named */
  netfilter?: boolean | { tables: string[] };
  /** sysctl names (`net.ipv4.ip_forward`); one the kernel does not have is an error and is left out */
  sysctls?: string[];
}

export interface KernelState {
  links: KernelLink[];
  routes: KernelRoute[];
  rules: KernelRule[];
  qdiscs: KernelQdisc[];
  bridgePorts: BridgePort[];
  ingressFilters: KernelFilter[];
  netfilter: NetfilterTable[];
  sysctls: Record<string, string>;
  /** a command that could not run or whose output did not parse; what it would have read stays empty */
  errors: string[];
}

export interface KernelReadOptions {
  signal?: AbortSignal;
  /** per command (default 10 s) */
  timeoutMs?: number;
}

/**
 * The one reader of kernel state. `netns` is the path of a network namespace file (a pod's), or undefined for the
 * engine's own (the host's). A failed command never fails the read: it adds to `errors`.
 */
export interface KernelReader {
  read(netns: string | undefined, query: KernelQuery, options?: KernelReadOptions): Promise<KernelState>;
}

export function emptyKernelState(): KernelState {
  return { links: [], routes: [], rules: [], qdiscs: [], bridgePorts: [], ingressFilters: [], netfilter: [], sysctls: {}, errors: [] };
}

/**
 * A reader whose "host" is a node's network namespace (a kind node on this machine): every read of the host's netns
 * (netns undefined) is made in the node's instead, so a pod's host veth, bridge, routes, tc and netfilter are read
 * where its node keeps them.
 */
export function placedKernelReader(kernel: KernelReader, nodeNetns: string | undefined): KernelReader {
  if (nodeNetns === undefined) return kernel;
  return { read: (netns, query, options) => kernel.read(netns ?? nodeNetns, query, options) };
}
