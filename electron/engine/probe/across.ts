/**
 * Paths across the nodes of this machine (a kind cluster's nodes, each a runtime in a netns of its own): pod → pod to
 * the pods of other nodes and back (the network path, and each TCP port the receiving pod declares in its port
 * mappings: kubelet lists every container port there), pod → another node's host ports at that node's addresses, node → pod; and the
 * matrix, every pod → every other pod. Each is a real TCP connect to a responder answering with this probe's nonce
 * and the id of what it answers for, judged as every probe path is (judge.ts), and names its source and destination
 * node.
 *
 * With a trace, the connection is followed through every netns it crosses — the sending pod's, its node's, the
 * receiving node's and the receiving pod's — route decisions and netfilter rule by rule in each, every step naming
 * its node. A path between nodes also needs each node to route the other's pod subnet to it (kindnet's routes): the
 * nodes' routes are read once per run, and a failed path that lacks such a route on a node names that node and the
 * route it lacks, traced or not.
 */
import { randomBytes } from 'node:crypto';
import { BlockList } from 'node:net';
import { protocolName } from '../../../shared/domain/config';
import type { ProbeMatrix, ProbeMatrixCell } from '../../../shared/domain/nodes';
import { PROBE_PEERS_MAX, type ProbePath, type TraceStep } from '../../../shared/domain/probe';
import type { PodFacts } from '../common/pod-facts';
import type { KernelRoute } from '../kernel/types';
import type { ConnectOutcome, ProbeNet } from '../netns/probe-net';
import type { FlowNetns, FlowToTrace, ProbeTracer, TracedFlow } from './deps';
import { judge, podName } from './judge';
import { auditAcross, type AcrossMtuPath, type MtuHop } from './mtu-across';
import { declaredPorts, fmtAddr, type PlannedConnect } from './plan';
import { ProbeSession } from './session';

/** One node as the paths across nodes see it. */
export interface AcrossNode {
  name: string;
  /** its netns as this process reaches it (/proc/<runtime pid>/ns/net); undefined: this host's */
  netnsPath?: string;
  /** its addresses (no prefix) */
  addresses: string[];
  /** its pod subnets (CIDR) */
  podSubnets: string[];
  /** its pods, resolved (only the ready ones with a netns are measured) */
  pods: PodFacts[];
}

export interface AcrossDeps {
  /** a ProbeNet placed on no node: every agent is opened by its netns path (undefined: this host's) */
  net: ProbeNet;
  tracer?: ProbeTracer;
}

export interface AcrossOptions {
  trace?: boolean;
  signal?: AbortSignal;
  /** per connect (default 1500 ms) */
  connectTimeoutMs?: number;
  /** audit each path's MTU beside the connects (default true; the matrix never does) */
  mtu?: boolean;
}

/** a netns a cross-node connect starts or ends in: a node's own, or a pod's */
interface Place {
  key: string;
  netnsPath?: string;
  label: string;
  node: AcrossNode;
  pod?: PodFacts;
}

interface CrossConnect {
  path: ProbePath;
  from: Place;
  to: Place;
  host: string;
  port: number;
  /** the address the connect leaves from (the sender pod's or node's), for the route back */
  src: string;
  existing: boolean;
}

const nodeKey = (n: AcrossNode) => `node:${n.name}`;
const nodePlace = (n: AcrossNode): Place => ({ key: nodeKey(n), netnsPath: n.netnsPath, label: `node ${n.name}`, node: n });
const podPlace = (n: AcrossNode, pod: PodFacts): Place => ({
  key: pod.id,
  netnsPath: pod.netnsPath,
  label: `pod ${podName(pod)} on ${n.name}`,
  node: n,
  pod,
});
const isV4 = (ip: string) => /^\d+\.\d+\.\d+\.\d+$/.test(ip);
const familyOf = (ip: string): 4 | 6 => (isV4(ip) ? 4 : 6);
/** the address other pods reach a pod at: its IPv4 primary (kindnet's routes are IPv4), else its primary */
export const podAddress = (pod: PodFacts): string | undefined =>
  [pod.ip, ...(pod.additionalIps ?? [])].find((ip) => ip && isV4(ip)) ?? pod.ip;
/** a dual-stack pod's IPv6 address, beside the IPv4 one podAddress gives (a single-stack IPv6 pod's is that one) */
const podAddress6 = (pod: PodFacts): string | undefined => {
  const v6 = [pod.ip, ...(pod.additionalIps ?? [])].find((ip) => ip && !isV4(ip));
  return v6 !== undefined && v6 !== podAddress(pod) ? v6 : undefined;
};
const measurable = (pod: PodFacts) => pod.state === 'Ready' && pod.netnsPath !== undefined && !pod.netnsClosed && !!podAddress(pod);

const newestFirst = (a: PodFacts, b: PodFacts) => (a.createdAtNs.padStart(24, '0') > b.createdAtNs.padStart(24, '0') ? -1 : 1);

/** the paths between one pod and every other node: its pods both ways, their host ports, the node itself → the pod */
export async function probeAcrossNodes(
  deps: AcrossDeps,
  nodes: AcrossNode[],
  podId: string,
  opts: AcrossOptions = {},
): Promise<{ paths: ProbePath[]; errors: string[] }> {
  const home = nodes.find((n) => n.pods.some((p) => p.id === podId));
  const rec = home?.pods.find((p) => p.id === podId);
  if (!home || !rec || !measurable(rec)) return { paths: [], errors: [] };
  const session = new ProbeSession(deps.net, randomBytes(8).toString('hex'), opts.signal);
  const errors: string[] = [];
  try {
    const me = podPlace(home, rec);
    const myIp = podAddress(rec)!;
    const connects: CrossConnect[] = [];
    const port = responderPorts(session);
    for (const other of nodes) {
      if (other === home) continue;
      const peers = other.pods.filter(measurable).sort(newestFirst).slice(0, PROBE_PEERS_MAX);
      for (const q of peers) {
        const them = podPlace(other, q);
        const theirIp = podAddress(q)!;
        const theirLabel = `peer ${q.config.metadata.name}`;
        connects.push(cross('peer', me, them, theirIp, await port(them), myIp, 'pod'));
        connects.push(cross('peer', them, me, myIp, await port(me), theirIp, theirLabel));
        // dual stack on both ends: the IPv6 paths too, each its own connect (a node may route one family and not the other)
        const [my6, their6] = [podAddress6(rec), podAddress6(q)];
        if (my6 && their6) {
          connects.push(cross('peer', me, them, their6, await port(them), my6, 'pod'));
          connects.push(cross('peer', them, me, my6, await port(me), their6, theirLabel));
        }
        for (const [from, to, host, src, label] of [
          [me, them, theirIp, myIp, 'pod'],
          [them, me, myIp, theirIp, theirLabel],
        ] as const)
          for (const d of declaredPorts(to.pod!)) {
            if (d.proto !== 'tcp') continue;
            const c = cross('peerPort', from, to, host, d.port, src, label);
            c.existing = await session.ensurePort(to.pod!.id, to.netnsPath!, d.port);
            c.path.declaredBy = d.declaredBy;
            connects.push(c);
          }
        // another node's host ports, at that node's own addresses (what a NodePort-style client on another node uses)
        for (const m of q.config.port_mappings) {
          if (m.host_port <= 0 || protocolName(m.protocol).toLowerCase() !== 'tcp') continue;
          const addrs = other.addresses.filter((a) => isV4(a) && (!m.host_ip || m.host_ip === a));
          for (const addr of addrs) {
            const existing = await session.ensurePort(q.id, q.netnsPath!, m.container_port);
            const c = cross('hostPort', me, them, addr, m.host_port, myIp, 'pod');
            c.existing = existing;
            c.path.note = `host port ${m.host_port} of ${podName(q)} on node ${other.name}`;
            connects.push(c);
          }
        }
      }
      // the node itself → the pod (what the node's kubelet, or a hostNetwork pod there, does)
      const src = other.addresses.find(isV4);
      if (src) connects.push(cross('podPort', nodePlace(other), me, myIp, await port(me), src, `node ${other.name}`));
      else errors.push(`node ${other.name} has no IPv4 address: node → pod not measured from it`);
    }
    return { paths: await runConnects(deps, session, nodes, connects, { ...opts, mtu: opts.mtu !== false }, errors), errors };
  } finally {
    await session.close();
  }
}

/** every pod → every other pod of the chosen nodes, one connect per ordered pair */
export async function probeMatrix(deps: AcrossDeps, nodes: AcrossNode[], opts: AcrossOptions = {}): Promise<ProbeMatrix> {
  const t0 = performance.now();
  const matrix: ProbeMatrix = {
    measuredAt: new Date().toISOString(),
    durationMs: 0,
    nodes: nodes.map((n) => n.name),
    pods: [],
    cells: [],
    errors: [],
  };
  const places: Place[] = [];
  for (const n of nodes)
    for (const pod of [...n.pods].sort((a, b) => (podName(a) ?? '').localeCompare(podName(b) ?? ''))) {
      if (!measurable(pod)) continue;
      places.push(podPlace(n, pod));
      matrix.pods.push({ id: pod.id, name: podName(pod)!, node: n.name, ip: podAddress(pod)! });
    }
  const session = new ProbeSession(deps.net, randomBytes(8).toString('hex'), opts.signal);
  try {
    const port = responderPorts(session);
    const ports = new Map<string, number>();
    // every agent (a Node process in each pod) starts at once: their start-up is most of the matrix's time
    await Promise.all(places.map((p) => session.open(p.key, p.netnsPath)));
    await Promise.all(places.map(async (p) => ports.set(p.key, await port(p))));
    const connects: CrossConnect[] = [];
    for (const a of places)
      for (const b of places) {
        if (a === b) continue;
        connects.push(cross('peer', a, b, podAddress(b.pod!)!, ports.get(b.key)!, podAddress(a.pod!)!, 'pod'));
      }
    const paths = await runConnects(deps, session, nodes, connects, { ...opts, mtu: false }, matrix.errors);
    matrix.cells = paths.map((p, i): ProbeMatrixCell => {
      const c = connects[i]!;
      return {
        from: c.from.key,
        to: c.to.key,
        fromNode: c.from.node.name,
        toNode: c.to.node.name,
        verdict: p.verdict,
        ...(p.rttMs !== undefined && { rttMs: p.rttMs }),
        note: p.note,
        ...(p.why && { why: p.why }),
        ...(p.trace && { trace: p.trace }),
      };
    });
    if (opts.trace && paths.length > 0 && paths.every((p) => p.trace)) matrix.traced = true;
  } finally {
    await session.close();
  }
  matrix.durationMs = performance.now() - t0;
  return matrix;
}

/** one responder per place, opened on first use, answering with the place's key */
function responderPorts(session: ProbeSession): (p: Place) => Promise<number> {
  const ports = new Map<string, Promise<number>>();
  return (p) => {
    let port = ports.get(p.key);
    if (!port) {
      port = session.open(p.key, p.netnsPath).then((agent) => agent.respond(0, session.banner(p.key)));
      ports.set(p.key, port);
    }
    return port;
  };
}

function cross(kind: ProbePath['kind'], from: Place, to: Place, host: string, port: number, src: string, fromLabel: string): CrossConnect {
  const path: ProbePath = {
    kind,
    from: fromLabel,
    to: fmtAddr(host, port),
    proto: 'tcp',
    verdict: 'timeout',
    measured: false,
    note: '',
    family: isV4(host) ? 4 : 6,
    fromNode: from.node.name,
    toNode: to.node.name,
  };
  return { path, from, to, host, port, src, existing: false };
}

/** opens the agents, connects every path at once (traced when asked), and judges each; never throws for a path */
async function runConnects(
  deps: AcrossDeps,
  session: ProbeSession,
  nodes: AcrossNode[],
  connects: CrossConnect[],
  opts: AcrossOptions,
  errors: string[],
): Promise<ProbePath[]> {
  const timeoutMs = opts.connectTimeoutMs ?? 1500;
  await Promise.all(connects.flatMap((c) => [session.open(c.from.key, c.from.netnsPath), session.open(c.to.key, c.to.netnsPath)]));
  // each node's routes, read once: the kindnet-style route a failed path lacks is named from them
  const routesOf = new Map<string, KernelRoute[] | undefined>();
  await Promise.all(
    nodes.map(async (n) => {
      const read = deps.net.netnsLinks ? await deps.net.netnsLinks(n.netnsPath, opts.signal).catch(() => undefined) : undefined;
      routesOf.set(n.name, read?.routes);
    }),
  );
  const tracer = opts.trace ? deps.tracer : undefined;
  if (opts.trace && !tracer) errors.push('tracing is not available from this engine: no path was traced');
  const flows = tracer ? connects.map((c) => flowOf(c, tracer.allocatePort())) : undefined;
  let active: Awaited<ReturnType<ProbeTracer['begin']>> | undefined;
  if (tracer && flows)
    try {
      active = await tracer.begin(flows, opts.signal);
    } catch (e) {
      errors.push(`could not start tracing: ${(e as Error).message}`);
    }
  let records: TracedFlow[] | undefined;
  let outcomes: ConnectOutcome[];
  // the MTU audit runs beside the connects: its echoes are ICMP, which no TRACE rule of the connects matches
  const audit = opts.mtu
    ? auditAcross({ net: deps.net, session, paths: connects.map(mtuPathOf) }).catch((e: unknown) => ({
        byIndex: new Map<number, NonNullable<ProbePath['mtu']>>(),
        errors: [`path MTU: ${(e as Error).message}`],
      }))
    : undefined;
  try {
    outcomes = await Promise.all(
      connects.map((c, i) =>
        session.agent(c.from.key).connect(c.host, c.port, timeoutMs, c.existing ? 400 : timeoutMs, {
          resetIfBanner: session.answerPrefix,
          ...(active && flows && { localPort: flows[i]!.sport }),
        }),
      ),
    );
  } finally {
    if (active)
      records = await active.finish().catch((e: unknown) => {
        errors.push(`tracing: ${(e as Error).message}`);
        return undefined;
      });
    if (tracer && flows) for (const f of flows) tracer.releasePort(f.sport);
  }
  const mtus = await audit;
  if (mtus) errors.push(...mtus.errors);
  const everyPod = nodes.flatMap((n) => n.pods);
  const known = everyPod.map((r) => ({
    id: r.id,
    network: r.network?.networks.find((n) => n.ifName === 'eth0')?.network,
    ips: [r.ip, ...(r.additionalIps ?? [])].filter(Boolean),
  }));
  return connects.map((c, i) => {
    const planned: PlannedConnect = {
      path: c.path,
      fromAgent: c.from.key,
      host: c.host,
      port: c.port,
      expect: c.to.key,
      existing: c.existing,
    };
    const outcome = outcomes[i]!;
    const path = judge(planned, outcome, session.nonce, everyPod, undefined);
    if (path.verdict === 'reachable' && c.to.pod === undefined) path.answeredBy = undefined;
    if (tracer && active && flows && records?.[i]) {
      const flow = flows[i]!;
      const missing = [...active.missing, ...records[i]!.missing];
      const { steps, why, partial } = tracer.explain({
        flow,
        record: records[i]!,
        path,
        outcome,
        known,
        podName: (id) => podName(everyPod.find((p) => p.id === id)),
        target: flow.netns[flow.netns.length - 1]!,
        missing,
      });
      const nodeOf = new Map(flow.netns.map((n) => [n.key, n.node]));
      for (const s of steps) {
        const node = nodeOf.get(s.netns);
        if (node !== undefined) s.node = node;
      }
      path.why = why;
      path.trace = {
        flow: { sport: flow.sport, dst: flow.dst, dport: flow.dport },
        steps,
        missing,
        ...(partial && { partial }),
      };
      const capture = records[i]!.capture;
      // the path's own download: its flow's packets only
      if (capture)
        path.trace.capture = { pcapngBase64: capture.pcapng.toString('base64'), interfaces: capture.interfaces, packets: capture.packets };
    }
    if (path.verdict !== 'reachable' && path.verdict !== 'shadowed') nameMissingRoute(c, path, routesOf);
    const mtu = mtus?.byIndex.get(i);
    if (mtu) path.mtu = mtu;
    return path;
  });
}

const nodeHop = (n: AcrossNode): MtuHop => ({
  key: nodeKey(n),
  ...(n.netnsPath !== undefined && { netnsPath: n.netnsPath }),
  label: `node ${n.name}`,
  node: n.name,
});

const placeHops = (p: Place): AcrossMtuPath['from'] =>
  p.pod
    ? {
        ns: {
          key: p.key,
          ...(p.netnsPath !== undefined && { netnsPath: p.netnsPath }),
          label: `pod ${podName(p.pod) ?? p.key.slice(0, 12)}`,
          node: p.node.name,
        },
        node: nodeHop(p.node),
      }
    : { ns: nodeHop(p.node) };

/** a cross-node connect as the MTU audit sees it: a host port's path is echoed to the pod its DNAT sends to (ICMP is not DNATed) */
function mtuPathOf(c: CrossConnect): AcrossMtuPath {
  return { from: placeHops(c.from), to: placeHops(c.to), dst: (c.to.pod && podAddress(c.to.pod)) ?? c.host, src: c.src };
}

/** the netns a cross-node connect crosses, the sender's first, and the route decisions that explain it */
function flowOf(c: CrossConnect, sport: number): FlowToTrace {
  const nodeNs = (p: Place): FlowNetns => ({
    key: nodeKey(p.node),
    ...(p.node.netnsPath !== undefined && { path: p.node.netnsPath }),
    label: `node ${p.node.name}`,
    node: p.node.name,
  });
  const ns = (p: Place): FlowNetns => {
    if (!p.pod) return nodeNs(p);
    const parent = nodeNs(p);
    return {
      key: p.key,
      ...(p.netnsPath !== undefined && { path: p.netnsPath }),
      label: p.label,
      node: p.node.name,
      parent: { key: parent.key, ...(parent.path !== undefined && { path: parent.path }), label: parent.label },
    };
  };
  const list: FlowNetns[] = [];
  const add = (n: FlowNetns) => {
    if (!list.some((x) => x.key === n.key)) list.push(n);
  };
  add(ns(c.from));
  add(nodeNs(c.from));
  add(nodeNs(c.to));
  add(ns(c.to));
  const fromNode = nodeNs(c.from);
  const toNode = nodeNs(c.to);
  const routes: FlowToTrace['routes'] = [
    { netns: ns(c.from), query: { dst: c.host, sport, dport: c.port }, purpose: `route to ${c.host}` },
  ];
  if (c.from.pod) routes.push({ netns: fromNode, query: { dst: c.host }, purpose: `route on node ${c.from.node.name} to ${c.host}` });
  if (toNode.key !== fromNode.key || !c.from.pod)
    routes.push({ netns: toNode, query: { dst: c.src }, purpose: `route back on node ${c.to.node.name} to ${c.src}`, reply: true });
  return { sport, family: isV4(c.host) ? 4 : 6, dst: c.host, dport: c.port, netns: list, routes };
}

/** whether ip is in cidr ("default" is every address of ip's family); both families, through node:net's BlockList */
function inCidr(cidr: string, ip: string, family: 4 | 6 = familyOf(ip)): boolean {
  const [net, bits] = cidr === 'default' ? [family === 4 ? '0.0.0.0' : '::', '0'] : cidr.split('/');
  if (!net || familyOf(net) !== familyOf(ip)) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  try {
    list.addSubnet(net, bits === undefined ? (family === 4 ? 32 : 128) : Number(bits), type);
    return list.check(ip, type);
  } catch {
    return false;
  }
}

const prefixLen = (dst: string, family: 4 | 6) => (dst === 'default' ? 0 : Number(dst.split('/')[1] ?? (family === 4 ? 32 : 128)));

/** the route of the main table a node's kernel would pick for ip (longest prefix, of ip's family), if any */
function bestRoute(routes: KernelRoute[], ip: string): KernelRoute | undefined {
  const family = familyOf(ip);
  return routes
    .filter((r) => r.family === family && r.table === 'main' && (r.type === undefined || r.type === 'unicast') && inCidr(r.dst, ip, family))
    .sort((a, b) => prefixLen(b.dst, family) - prefixLen(a.dst, family))[0];
}

const routeText = (r: KernelRoute) => [r.dst, r.gateway && `via ${r.gateway}`, r.dev && `dev ${r.dev}`].filter(Boolean).join(' ');

/**
 * A failed path between nodes: does each node route the other's pod subnet to it (via its address)? The first node
 * that does not is named with the route it lacks and the one its kernel takes instead, as the path's why and, with a
 * trace, as its deciding step.
 */
function nameMissingRoute(c: CrossConnect, path: ProbePath, routesOf: Map<string, KernelRoute[] | undefined>): void {
  if (c.from.node === c.to.node) return;
  const checks: Array<{ on: AcrossNode; toward: AcrossNode; ip: string; reply: boolean }> = [
    { on: c.from.node, toward: c.to.node, ip: c.host, reply: false },
    { on: c.to.node, toward: c.from.node, ip: c.src, reply: true },
  ];
  for (const k of checks) {
    // an address on the node link itself needs no route of kindnet's
    if (k.toward.addresses.includes(k.ip)) continue;
    const subnet = k.toward.podSubnets.find((s) => inCidr(s, k.ip));
    const routes = routesOf.get(k.on.name);
    if (!subnet || !routes) continue;
    const family = familyOf(k.ip);
    // the route must lead to the other node by an address of the same family (kindnet's IPv6 routes go via its IPv6 one)
    const gateways = new Set(k.toward.addresses.filter((a) => familyOf(a) === family));
    const best = bestRoute(routes, k.ip);
    if (best?.gateway && gateways.has(best.gateway)) continue;
    const taken = best ? `its kernel takes ${routeText(best)} instead` : 'its kernel has no route for it at all';
    const via = gateways.size ? ` via ${[...gateways].join(' or ')}` : '';
    const detail =
      `node ${k.on.name} has no route to ${subnet} (node ${k.toward.name}'s pods)${via}` +
      `${k.reply ? ', so the answers to ' : ': '}${k.reply ? `${k.ip} never go back there` : `packets to ${k.ip} never reach node ${k.toward.name}`}; ${taken}`;
    path.why = path.why ? `${detail}. Traced: ${path.why}` : detail;
    if (path.trace) {
      const step: TraceStep = {
        kind: 'route',
        netns: nodeKey(k.on),
        node: k.on.name,
        family,
        verdict: 'missing',
        ...(best && { rule: routeText(best) }),
        ...(k.reply && { reply: true }),
        decisive: true,
        detail,
      };
      for (const s of path.trace.steps) delete s.decisive;
      const last = path.trace.steps.map((s) => s.netns).lastIndexOf(step.netns);
      path.trace.steps.splice(last >= 0 ? last + 1 : path.trace.steps.length, 0, step);
    }
    return;
  }
}
