/**
 * What the kernel says now, read from inside the sandbox's netns and from the host: the check that the CNI result
 * and the annotations really took effect (addresses, routes, tc qdiscs for bandwidth, DNAT rules for host ports).
 */
export interface LiveAddress {
  family: 4 | 6;
  address: string;
  prefixLen: number;
  scope?: string;
}
export interface LiveInterface {
  name: string;
  ifindex: number;
  mac?: string;
  mtu?: number;
  state?: string;
  kind?: string;
  addresses: LiveAddress[];
}
export interface LiveRoute {
  family: 4 | 6;
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
  scope?: string;
  metric?: number;
}

export interface LiveQdisc {
  dev: string;
  /** which side of the pod the device is: the host end of its veth (ingress shaping) or its ifb (egress shaping) */
  role: 'host-veth' | 'ifb';
  kind: string;
  /** tbf rate in bit/s, when the qdisc has one */
  rateBitsPerSecond?: number;
  burstBytes?: number;
}

export interface LiveBandwidthCheck {
  direction: 'ingress' | 'egress';
  /** from the annotation; undefined when none was set */
  requestedBitsPerSecond?: number;
  /** the tbf rate found on the device; undefined when none */
  appliedBitsPerSecond?: number;
  device?: string;
  /** requested and applied agree (tc rounds rates, so within 1 %), or both are absent */
  matches: boolean;
  note: string;
}

export interface LivePortCheck {
  /** index into the config's port_mappings */
  index: number;
  protocol: string;
  hostPort: number;
  containerPort: number;
  /** the DNAT rule found in the nat table that sends this host port to the pod, verbatim (IPv4 first) */
  rule?: string;
  /** every such rule, verbatim: a dual-stack pod has one in iptables and one in ip6tables */
  rules: string[];
  found: boolean;
  note: string;
}

/**
 * One thing a CNI plugin did to this pod that the CNI result does not show: firewall's rules for the pod's address,
 * tuning's sysctls and MAC/MTU, sbr's policy rule and its table's routes, host-device's moved link. Each names its
 * owner (plugin, network, interface) and says where it comes from: read from the kernel at the view's `collectedAt`,
 * or derived from the plugin's config only (docs/semantics.md#plugin-effects).
 */
export interface LivePluginEffect {
  plugin: string;
  network: string;
  ifName: string;
  kind: 'iptables-rule' | 'sysctl' | 'policy-rule' | 'route' | 'link';
  source: 'kernel' | 'config';
  /** the rule, value or link as the kernel has it (or as the config says, for source "config") */
  what: string;
  /** the config asks for a value and the kernel has it; undefined when there is nothing to compare */
  matches?: boolean;
  note?: string;
}

/** plugins whose effects the live view reads (the rest show in the CNI result, or in the checks above) */
export const EFFECT_PLUGINS = ['firewall', 'tuning', 'sbr', 'host-device'] as const;

/** e.g. "tuning (net1/eth0) sysctl net.ipv4.conf.eth0.proxy_arp = 1 [kernel, as asked]" */
export function describeEffect(e: LivePluginEffect): string {
  const check = e.matches === undefined ? '' : e.matches ? ', as asked' : ', NOT as asked';
  return `${e.plugin} (${e.network}/${e.ifName}) ${e.kind} ${e.what} [${e.source}${check}]${e.note ? ` — ${e.note}` : ''}`;
}

export interface LiveNetworkView {
  collectedAt: string;
  netnsPath: string;
  interfaces: LiveInterface[];
  routes: LiveRoute[];
  qdiscs: LiveQdisc[];
  bandwidth: LiveBandwidthCheck[];
  ports: LivePortCheck[];
  /** what firewall, tuning, sbr and host-device did, when the pod ran any of them (absent otherwise) */
  pluginEffects?: LivePluginEffect[];
  /** a command that could not run or whose output did not parse; the rest of the view is still valid */
  errors: string[];
}
