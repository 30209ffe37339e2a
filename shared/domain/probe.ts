/**
 * Reachability measured with real packets, and host-port conflicts between sandboxes. The probe report is what the
 * engine measured (TCP connects from the host and from inside namespaces it created); anything it did not measure
 * says so (`measured: false`), so no front door can show a configuration-derived fact as a green check.
 */
/**
 * `peer` is the network path between two pods (to the probe's responder on a port of its own choosing); `peerPort` is
 * a connect from one pod to a port the other declares (a port mapping's container port, a container's EXPOSE): the
 * path real traffic between pods takes, which a port-specific rule can drop while `peer` stays reachable.
 */
export type ProbePathKind = 'hostPort' | 'podPort' | 'gateway' | 'peer' | 'peerPort' | 'dns';
/**
 * `unreachable`: connect() failed at once with a routing error (ENETUNREACH, EHOSTUNREACH, EACCES from a prohibit route,
 * EINVAL from a blackhole route): no packet left, so it is neither a refusal nor a timeout.
 * `isolated`: the packet was sent and did not arrive, on a path the attachment's plugin forbids by design (a macvlan
 * child and its parent's own addresses, the host and a pod on a network with no host leg): expected, so it neither
 * fails the probe nor shows green; `why` names the plugin and the rule (docs/semantics.md#reachability-probe).
 */
export type ProbeVerdict = 'reachable' | 'refused' | 'timeout' | 'unreachable' | 'shadowed' | 'isolated' | 'notApplicable';

export interface ProbePath {
  kind: ProbePathKind;
  /** "host", "pod" (this sandbox's netns) or "peer <name>" */
  from: string;
  /** address:port as connected to ([v6]:port) */
  to: string;
  proto: string;
  verdict: ProbeVerdict;
  /** time to the TCP handshake, when reachable or shadowed */
  rttMs?: number;
  /** the 64-hex id of the sandbox whose responder answered (reachable: this one; shadowed: the other one) */
  answeredBy?: string;
  /** true when a packet was really sent; false for verdicts derived from state or configuration alone */
  measured: boolean;
  /** what answered inside the pod: an existing listener (never taken over) or the probe's own responder */
  listener?: 'existing' | 'responder';
  /** index into port_mappings, for hostPort/podPort paths */
  mappingIndex?: number;
  /**
   * a peerPort path: where the pod connected to declares the port, e.g. "port mapping 0" (its own port_mappings) or
   * "container web (EXPOSE 80/tcp)", each place once, joined by ", "
   */
  declaredBy?: string;
  family?: 4 | 6;
  /** the CNI network the path crosses (the pod's attachment to it) */
  network?: string;
  /** the pod's interface on that network (eth0, eth1, …) */
  interface?: string;
  note: string;
  /**
   * isolated (or a path the design forbids that arrived anyway): the plugin and the rule of its design; with a trace,
   * also one sentence saying what decided the verdict (which rule, route or listener), measured from the kernel
   */
  why?: string;
  /** asked for with `probe --trace` / Why?: the steps this path's own connection took through each netns */
  trace?: PathTrace;
  /** a `dns` path: the query sent from inside the pod and what came back */
  dns?: DnsQueryResult;
  /** the path MTU audit of this path (absent when it was not audited) */
  mtu?: PathMtu;
  /**
   * a probe across nodes (`--all-nodes`): the node the path starts on and the node it ends on (the same for a path
   * within one node). On another node, `from: "host"` is that node's netns; a `podPort` path from `node <name>` is
   * node → pod, a `hostPort` path from `pod` to a node address is another node's host port.
   */
  fromNode?: string;
  toNode?: string;
}

/**
 * A DNS path's query and answer. `transport` is what the answer came over: UDP first, TCP when the UDP answer was
 * truncated or UDP was refused (an ICMP port unreachable).
 */
export interface DnsQueryResult {
  server: string;
  name: string;
  qtype: 'A' | 'AAAA' | 'NS';
  transport?: 'udp' | 'tcp';
  /** the UDP answer had the TC bit: the answer shown came over TCP */
  truncated?: boolean;
  /** UDP got an ICMP port unreachable, so TCP was tried */
  udpRefused?: boolean;
  /** NOERROR, NXDOMAIN, SERVFAIL, REFUSED, … */
  rcode?: string;
  /** the answer section, one record a line ("A 10.0.0.9", "CNAME x.example.") */
  answers?: string[];
}

/** the narrowest link found along a path, read from the kernel */
export interface NarrowLink {
  /** "host" or a node's name */
  node: string;
  /** "host", "pod" or "peer <name>" */
  netns: string;
  /** an interface name, or "route to <dst>" for a route with an mtu attribute */
  interface: string;
  mtu: number;
}

/**
 * Path MTU: the largest IP packet (bytes, headers included) that crossed with DF set, found by bisection between
 * PATH_MTU_MIN and the pod interface's MTU. `blackHole`: a size the interface allows was dropped with no ICMP
 * "fragmentation needed" (a failure); a smaller MTU that PMTU discovery reported (`pmtud`) is shown, not failed.
 */
export interface PathMtu {
  /** undefined when no echo came back at any size (ICMP echo does not pass: not measured) */
  pathMtu?: number;
  interfaceMtu: number;
  blackHole: boolean;
  /** a hop answered "fragmentation needed" (or the sender's own route/link said the size is too big) */
  pmtud?: boolean;
  at?: NarrowLink;
  /** echo probes sent */
  probes: number;
  note: string;
}

/** the smallest path MTU the audit tries (RFC 791's minimum datagram every host must accept; IPv6's own minimum) */
export const PATH_MTU_MIN = { 4: 576, 6: 1280 } as const;

/** The pod's resolver configuration the DNS paths came from. */
export interface ProbeDns {
  /** where the nameservers came from: the pod's dns_config, or its resolv.conf */
  source: 'dns_config' | 'resolv.conf';
  servers: string[];
  searches: string[];
  options: string[];
  /** the pod's resolv.conf as written (absent when it could not be read) */
  resolvConf?: string;
  /** the name each server was asked for */
  name: string;
  qtype: DnsQueryResult['qtype'];
}

/** who installed a netfilter rule: a CNI plugin for a network and sandbox this engine knows, or null for nobody here */
export interface RuleOwner {
  plugin: string;
  /** the CNI network (absent for a chain a plugin shares between networks, e.g. portmap's CNI-HOSTPORT-MASQ) */
  network?: string;
  /** the 64-hex sandbox id the rule was written for (absent for shared chains) */
  sandboxId?: string;
}

/** gap: a part of the path that could not be traced (it comes first, and decides a path the trace cannot explain) */
export type TraceStepKind = 'gap' | 'route' | 'netfilter' | 'conntrack' | 'drop' | 'deliver' | 'seen';

export interface TraceStep {
  kind: TraceStepKind;
  /** "host" (or "node:<name>" on a path across nodes) or the 64-hex id of the sandbox whose netns this happened in */
  netns: string;
  /** the node that netns belongs to, when it is not this host (a kind node on this machine) */
  node?: string;
  family: 4 | 6;
  /** netfilter: table and chain as iptables names them */
  table?: string;
  chain?: string;
  /** netfilter: the rule as iptables-save prints it; route: the route as `ip route` prints it */
  rule?: string;
  /** netfilter: nft's handle of the rule (iptables shows none) */
  handle?: number;
  /** netfilter: the rule's line number in its chain, as `iptables -t <table> -L <chain> --line-numbers` counts it */
  position?: number;
  /** netfilter: ACCEPT, DROP, REJECT, DNAT, MASQUERADE, JUMP:<chain>, RETURN, CONTINUE, policy:<verdict>; route: the route type or error */
  verdict?: string;
  /** netfilter: who installed the rule (null: no plugin here did) */
  owner?: RuleOwner | null;
  interface?: string;
  seen?: boolean;
  /** the reply direction (packets back to the prober), when the step is about one */
  reply?: boolean;
  /** the step that decided the path's verdict (the app highlights it) */
  decisive?: boolean;
  detail: string;
}

export interface PathTrace {
  /** the connection traced: the prober's own source port was chosen before connecting, so only this flow is matched */
  flow: { sport: number; dst: string; dport: number };
  steps: TraceStep[];
  /** kernel tools or features the trace could not use, each with what is missing (e.g. "conntrack: not installed") */
  missing: string[];
  /**
   * seen-at: this path's flow only (its source port, either way) from every hop's capture, as one pcapng (base64), the
   * path's "Download pcapng"; ProbeReport.capture holds every flow of the probe
   */
  capture?: { pcapngBase64: string; interfaces: string[]; packets: number };
  /**
   * a part that could have decided the verdict was not traced (netfilter: a monitor that failed or lost events): the
   * why names no cause the gap could hide, and says so first
   */
  partial?: true;
}

export interface ProbeReport {
  sandboxId: string;
  /** RFC 3339: when the measurement started */
  measuredAt: string;
  /** how it was measured, for the "measured at … by …" label */
  measuredBy: string;
  durationMs: number;
  /** "onReady" when the engine ran it right after the sandbox became ready */
  trigger: 'onDemand' | 'onReady';
  paths: ProbePath[];
  /** problems that kept some paths from being measured; the paths say which */
  errors: string[];
  /**
   * Ready peers on the pod's eth0 network (each network's are in `networks`), and how many of them were measured (the newest, up to PROBE_PEERS_MAX):
   * each one measured is a Node agent in its namespace, so the probe's cost stays flat on a crowded network.
   */
  peers?: { ready: number; measured: number };
  /** true when every measured path was traced (`probe --trace`, Why?) */
  traced?: boolean;
  /**
   * with a trace: the seen-at captures of every hop as one pcapng (an interface per hop, named "<netns>/<interface>"),
   * base64; at most 128 bytes of each packet and 1000 packets per hop. `podscope probe --pcap FILE` writes it out.
   */
  capture?: { pcapngBase64: string; interfaces: string[]; packets: number };
  /** the pod's attachments the probe covered, in the order the runtime attached them (eth0 first) */
  networks?: ProbeNetwork[];
  /** a probe across nodes: the pod's node, and every node whose pods or addresses the paths reached */
  node?: string;
  nodes?: string[];
  /** the pod's nameservers and the name they were asked (the `dns` paths) */
  dns?: ProbeDns;
  /** true when the paths' MTU was audited */
  mtuAudited?: boolean;
}

/** One attachment of the pod, as the probe saw it: what decided which paths it measured and which are isolated. */
export interface ProbeNetwork {
  network: string;
  interface: string;
  /** plugin types of its chain, in order (from the conflist the attachment was made with) */
  plugins: string[];
  /** the kernel's kind of the pod's interface (veth, macvlan, ipvlan, …) when it could be read */
  linkKind?: string;
  /** the link a macvlan/ipvlan interface hangs off, in the host's netns */
  parent?: string;
  /** ready peers on this network, and how many of them were measured (the newest, up to PROBE_PEERS_MAX) */
  peers?: { ready: number; measured: number };
}

/** Most peers a probe connects to and from (the newest ready ones on the same network). */
export const PROBE_PEERS_MAX = 4;

/** what a report's connect paths are measured by; the report's own `measuredBy` says what every path used (measuredByText) */
export const PROBE_MEASURED_BY = 'TCP connect';

/** the MTU audit's method, in the "measured by" texts */
export const MTU_MEASURED_BY = 'DF-set ICMP echoes for the path MTU';

/**
 * What a DNS path's query went over: UDP first; TCP only after a truncated UDP answer or an ICMP port unreachable. A
 * query that timed out went over UDP alone (TCP is tried only on a truncation or a refusal).
 */
function dnsMeasuredBy(d: DnsQueryResult | undefined): string {
  if (d?.transport !== 'tcp') return 'DNS query over UDP';
  if (d.truncated) return 'DNS query over UDP, then TCP (the UDP answer was truncated)';
  if (d.udpRefused) return 'DNS query over UDP, then TCP (UDP was refused)';
  return 'DNS query over TCP';
}

/** How one path was measured: what was really sent on it (undefined for a path not measured). */
export function pathMeasuredBy(p: ProbePath): string | undefined {
  if (!p.measured) return undefined;
  const how = p.kind === 'dns' ? dnsMeasuredBy(p.dns) : PROBE_MEASURED_BY;
  return p.mtu ? `${how}; ${MTU_MEASURED_BY}` : how;
}

/**
 * What a report's paths were measured by, each kind of measurement once in the order it first appears: "TCP connect,
 * DNS query over UDP, DF-set ICMP echoes for the path MTU". A report with no measured path keeps its `measuredBy`.
 */
export function measuredByText(r: Pick<ProbeReport, 'paths' | 'measuredBy'>): string {
  const parts: string[] = [];
  const add = (s: string) => {
    if (!parts.includes(s)) parts.push(s);
  };
  let dnsUdp = false;
  let dnsTcp = false;
  let mtu = false;
  for (const p of r.paths) {
    if (!p.measured) continue;
    if (p.kind === 'dns') {
      // the transports a DNS query used, said once for every DNS path below
      add('DNS');
      dnsUdp ||= p.dns?.transport !== 'tcp' || !!p.dns.truncated || !!p.dns.udpRefused;
      dnsTcp ||= p.dns?.transport === 'tcp';
    } else add(PROBE_MEASURED_BY);
    mtu ||= p.mtu !== undefined;
  }
  if (parts.length === 0) return r.measuredBy;
  const dns = `DNS query over ${[dnsUdp && 'UDP', dnsTcp && 'TCP'].filter(Boolean).join(' and ')}`;
  const out = parts.map((s) => (s === 'DNS' ? dns : s));
  if (mtu) out.push(MTU_MEASURED_BY);
  return out.join(', ');
}

/**
 * True when every path that applies was measured reachable, `isolated` ones aside (the design forbids them), and at
 * least one path was measured (what `podscope probe` exits 0 for).
 */
export function probeSucceeded(report: ProbeReport): boolean {
  const applicable = report.paths.filter((p) => p.verdict !== 'notApplicable');
  const expected = applicable.filter((p) => p.verdict !== 'isolated');
  return applicable.some((p) => p.measured) && expected.every((p) => p.verdict === 'reachable' && p.measured && !p.mtu?.blackHole);
}

/** paths that fail the probe: not reachable, or reachable with an MTU black hole */
export function failingPaths(report: ProbeReport): ProbePath[] {
  return report.paths.filter(
    (p) => (p.verdict !== 'reachable' && p.verdict !== 'notApplicable' && p.verdict !== 'isolated') || p.mtu?.blackHole === true,
  );
}

/** one line about a path's MTU audit: "MTU 1500", "MTU 1400 < 1500 (PMTU discovery: …)", "MTU black hole …" */
export function describeMtu(m: PathMtu): string {
  const at = m.at
    ? `; narrowest link: ${m.at.interface} (${m.at.netns}${m.at.node !== 'host' ? ` on ${m.at.node}` : ''}) MTU ${m.at.mtu}`
    : '';
  if (m.pathMtu === undefined) return `MTU not measured: ${m.note}${at}`;
  if (m.blackHole) return `MTU black hole: ${m.note}${at}`;
  if (m.pathMtu < m.interfaceMtu) return `MTU ${m.pathMtu} < interface ${m.interfaceMtu} (${m.note})${at}`;
  return `MTU ${m.pathMtu}${at}`;
}

/** what a failing path is told by: its verdict, or the MTU black hole */
export function failureText(p: ProbePath): string {
  const head = `${p.kind} ${p.from} → ${p.to}: ${p.verdict}${p.answeredBy ? ` (answered by ${p.answeredBy})` : ''}`;
  return p.verdict === 'reachable' && p.mtu?.blackHole ? `${p.kind} ${p.from} → ${p.to}: ${describeMtu(p.mtu)}` : head;
}

/** what to say about an attachment beside its name: its chain, the link kind when the chain does not say it, the parent */
export function networkDetail(n: ProbeNetwork): string[] {
  const out = [n.plugins.join(' → ')];
  if (n.linkKind && n.linkKind !== n.plugins[0]) out.push(`${n.linkKind} link`);
  if (n.parent) out.push(`parent ${n.parent}`);
  return out.filter(Boolean);
}

/** The report's paths grouped by the network they cross, in the report's network order (paths without one last). */
export function pathsByNetwork(report: Pick<ProbeReport, 'paths' | 'networks'>): Array<{
  network?: string;
  interface?: string;
  info?: ProbeNetwork;
  paths: Array<{ path: ProbePath; index: number }>;
}> {
  const groups = new Map<
    string,
    { network?: string; interface?: string; info?: ProbeNetwork; paths: Array<{ path: ProbePath; index: number }> }
  >();
  const keyOf = (network?: string, ifName?: string) => (network === undefined ? '' : `${network}\u0000${ifName ?? ''}`);
  for (const n of report.networks ?? [])
    groups.set(keyOf(n.network, n.interface), { network: n.network, interface: n.interface, info: n, paths: [] });
  report.paths.forEach((path, index) => {
    // DNS paths are their own group (dnsPaths)
    if (path.kind === 'dns') return;
    const k = keyOf(path.network, path.interface);
    if (!groups.has(k)) groups.set(k, { network: path.network, interface: path.interface, paths: [] });
    groups.get(k)!.paths.push({ path, index });
  });
  const out = [...groups.values()];
  // paths the probe could not tie to a network (a stopped pod's planned paths) go last
  return [...out.filter((g) => g.network !== undefined), ...out.filter((g) => g.network === undefined)];
}

/** the report's DNS paths, in the order of the pod's nameservers */
export function dnsPaths(report: Pick<ProbeReport, 'paths'>): Array<{ path: ProbePath; index: number }> {
  return report.paths.flatMap((path, index) => (path.kind === 'dns' ? [{ path, index }] : []));
}

// ---- host-port conflicts ----

export interface HostPortHolder {
  id: string;
  name: string;
  createdAtNs: string;
  ready: boolean;
  hostNetwork?: boolean;
  hostPorts: Array<{ hostPort: number; containerPort: number; protocol: string; hostIP?: string }>;
}

export interface HostPortConflict {
  hostPort: number;
  protocol: string;
  /** the host_ip of the mapping asked about ("" = every address) */
  hostIP: string;
  /** the sandbox whose DNAT rule matches first */
  winner: string;
  winnerName?: string;
  /** the other sandboxes mapping the same host port/protocol: their rules are never reached */
  shadowed: string[];
  /** "dnat-chain": from the real order of CNI-HOSTPORT-DNAT; "creation-order": derived (portmap appends) */
  winnerFrom: 'dnat-chain' | 'creation-order';
}

const WILDCARD = new Set(['', '0.0.0.0', '::']);

/** Two mappings collide when port and protocol match and either listens on every address or both on the same one. */
export function hostIpsOverlap(a = '', b = ''): boolean {
  return WILDCARD.has(a) || WILDCARD.has(b) || a === b;
}

/** A conflict a new mapping would run into: every ready sandbox already holding that host port/protocol/host_ip. */
export interface PendingHostPortConflict {
  hostPort: number;
  protocol: string;
  hostIP: string;
  holders: Array<{ id: string; name: string }>;
}

export function conflictsForNewMappings(
  mappings: Array<{ hostPort: number; protocol: string; hostIP?: string }>,
  holders: HostPortHolder[],
): PendingHostPortConflict[] {
  const out: PendingHostPortConflict[] = [];
  for (const m of mappings) {
    const found = holders.filter(
      (h) =>
        h.ready &&
        !h.hostNetwork &&
        h.hostPorts.some((p) => p.hostPort === m.hostPort && p.protocol === m.protocol && hostIpsOverlap(p.hostIP, m.hostIP)),
    );
    if (found.length)
      out.push({
        hostPort: m.hostPort,
        protocol: m.protocol,
        hostIP: m.hostIP ?? '',
        holders: found.map((h) => ({ id: h.id, name: h.name })),
      });
  }
  return out;
}

/**
 * Which of the sandboxes mapping `sandboxId`'s host ports wins. `chainOrder` is the sandbox ids in the order their
 * jumps appear in CNI-HOSTPORT-DNAT for that protocol (first match wins); without it the order is derived from
 * creation time, because portmap appends each pod's jump at the end of the chain.
 */
export function hostPortConflictsFor(
  sandboxId: string,
  holders: HostPortHolder[],
  chainOrder?: (hostPort: number, protocol: string) => string[] | undefined,
): HostPortConflict[] {
  const self = holders.find((h) => h.id === sandboxId);
  if (!self || self.hostNetwork) return [];
  const out: HostPortConflict[] = [];
  const seen = new Set<string>();
  for (const m of self.hostPorts) {
    const key = `${m.hostPort}/${m.protocol}/${m.hostIP ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const group = holders.filter(
      (h) =>
        h.ready &&
        !h.hostNetwork &&
        h.hostPorts.some((p) => p.hostPort === m.hostPort && p.protocol === m.protocol && hostIpsOverlap(p.hostIP, m.hostIP)),
    );
    if (!group.some((h) => h.id === self.id) || group.length < 2) continue;
    const ids = group.map((h) => h.id);
    const order = chainOrder?.(m.hostPort, m.protocol)?.filter((id) => ids.includes(id));
    let winner: string;
    let winnerFrom: HostPortConflict['winnerFrom'];
    if (order && order.length > 0) {
      winner = order[0]!;
      winnerFrom = 'dnat-chain';
    } else {
      winner = [...group].sort((a, b) =>
        BigInt(a.createdAtNs) < BigInt(b.createdAtNs) ? -1 : BigInt(a.createdAtNs) > BigInt(b.createdAtNs) ? 1 : a.id.localeCompare(b.id),
      )[0]!.id;
      winnerFrom = 'creation-order';
    }
    out.push({
      hostPort: m.hostPort,
      protocol: m.protocol,
      hostIP: m.hostIP ?? '',
      winner,
      winnerName: group.find((h) => h.id === winner)?.name,
      shadowed: ids.filter((id) => id !== winner),
      winnerFrom,
    });
  }
  return out;
}

/**
 * Reads `iptables -t nat -S CNI-HOSTPORT-DNAT` lines: for each jump, the sandbox id portmap wrote in its comment,
 * the protocol and the destination ports. Returns, for a host port and protocol, the ids in chain order.
 */
export function dnatChainOrder(lines: string[]): (hostPort: number, protocol: string) => string[] {
  const jumps = lines.flatMap((l) => {
    if (!l.startsWith('-A CNI-HOSTPORT-DNAT ')) return [];
    const id = /id: \\?"([0-9a-f]{64})\\?"/.exec(l)?.[1];
    const proto = /-p (\w+)/.exec(l)?.[1];
    const ports = /--dports (\S+)/.exec(l)?.[1] ?? /--dport (\S+)/.exec(l)?.[1];
    if (!id || !proto || !ports) return [];
    return [{ id, proto, ports: ports.split(',').map(Number) }];
  });
  return (hostPort, protocol) => jumps.filter((j) => j.proto === protocol && j.ports.includes(hostPort)).map((j) => j.id);
}

/** The ids of every sandbox in `holders` that shares a host port/protocol/host_ip with another ready one (the pods list marks them). */
export function conflictingSandboxIds(holders: HostPortHolder[]): Set<string> {
  // only ready, non-host-network holders with host ports can be in a conflict group, with each other: checking just
  // those gives the same answer and keeps a 10,000-pod list (few with host ports) linear instead of quadratic
  const candidates = holders.filter((h) => h.ready && !h.hostNetwork && h.hostPorts.length > 0);
  const out = new Set<string>();
  for (const h of candidates) if (hostPortConflictsFor(h.id, candidates).length > 0) out.add(h.id);
  return out;
}
