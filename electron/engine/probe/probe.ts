/**
 * Reachability measured with real packets. For one sandbox, on every network it is attached to (eth0, eth1, …; each
 * path names its network and interface):
 *  - hostPort: every mapping that reached portmap, per network whose chain has portmap, from the host to 127.0.0.1,
 *    to that network's gateway addresses, and to host_ip when one was given;
 *  - podPort: every mapping with host_port <= 0 (never passed to CNI), from the host to each podIP:containerPort;
 *  - gateway: from the pod to a listener the probe opens on each network's gateway address on the host side;
 *  - peer: to and from the newest other ready sandboxes on each network (PROBE_PEERS_MAX per network; the report says
 *    how many of how many), in both families, to a responder on a port the probe picks (the network path);
 *  - peerPort: the same pairs, to every port the receiving pod declares (its port mappings' container ports, its
 *    containers' EXPOSE), each way: what real traffic between pods reaches, and what a port-specific rule can drop;
 *  - dns: a query to each of the pod's nameservers from inside its netns (dns.ts).
 * Beside the connects, each path's MTU is audited (mtu-audit.ts): a black hole fails the path.
 * A path the attachment's plugin forbids by design is still sent; no answer there is `isolated` (isolation.ts).
 * A port with a listener in the pod is connected to as it is (never taken over); a port without one gets a responder
 * that answers "PODSCOPE-PROBE <nonce> <sandbox id>". Every other ready sandbox mapping the same host port gets one
 * too, with the same nonce, so a connection that lands in another pod is recognised: shadowed, not reachable.
 * Traffic only goes to loopback, the bridge's own addresses and addresses inside namespaces this engine created.
 * Every agent (and so every responder and socket) is ended by pid before the probe returns.
 */
import { randomBytes } from 'node:crypto';
import { isHostNetwork, protocolName } from '../../../shared/domain/config';
import { PodscopeError } from '../../../shared/domain/errors';
import {
  dnatChainOrder,
  PROBE_MEASURED_BY,
  measuredByText,
  PROBE_PEERS_MAX,
  type PathMtu,
  type ProbePath,
  type ProbeReport,
} from '../../../shared/domain/probe';
import type { PodFacts } from '../common/pod-facts';
import { judge, podName } from './judge';
import type { DeclaredPort, FlowToTrace, ProbeDeps, ProbeTracer, TracedFlow } from './deps';
import { flowSpecFor, type FlowContext } from './flows';
import { attachmentsOf, eth0Ips, ipsOn, onNetwork, type ProbedAttachment } from './attachments';
import { childKind } from './isolation';
import { fmtAddr, planGateways, planPeers, planPortMappings, type PlanInput, type PlannedConnect, type ProbePlan } from './plan';
import { ProbeSession } from './session';
import { unreachableNote, type ConnectOutcome, type DnsOutcome, type ProbeNet } from '../netns/probe-net';
import { asConnectOutcome, judgeDns, planDns, podDns } from './dns';
import { auditMtu } from './mtu-audit';

export interface ProbeOptions {
  trigger?: ProbeReport['trigger'];
  signal?: AbortSignal;
  /** per connect (default 1500 ms): a DNAT to nowhere shows up as a timeout this long */
  connectTimeoutMs?: number;
  /** how long to wait for a responder's banner after connecting (default 400 ms) */
  bannerMs?: number;
  /** follow each connect through the kernel and explain each path (`why`, `trace`); docs/semantics.md#probe-trace */
  trace?: boolean;
  /** the name each nameserver is asked (default: dns.ts defaultDnsName) */
  dnsName?: string;
  /** audit each path's MTU beside its connect (default true; false only to measure what the audit costs) */
  mtu?: boolean;
}

export async function probeSandbox(ctx: ProbeDeps, idOrPrefix: string, opts: ProbeOptions = {}): Promise<ProbeReport> {
  const { net } = ctx;
  const rec = ctx.pods.get(idOrPrefix);
  const t0 = performance.now();
  const report: ProbeReport = {
    sandboxId: rec.id,
    measuredAt: new Date().toISOString(),
    measuredBy: PROBE_MEASURED_BY,
    durationMs: 0,
    trigger: opts.trigger ?? 'onDemand',
    paths: [],
    errors: [],
  };
  // a pause that died since the last poll must not be probed as ready
  await ctx.refreshLiveness(rec);
  const reason = await notApplicableReason(ctx, rec);
  if (reason) {
    report.paths = plannedPaths(rec).map((p) => ({ ...p, verdict: 'notApplicable', measured: false, note: reason }));
    report.durationMs = performance.now() - t0;
    return report;
  }
  const session = new ProbeSession(net, randomBytes(8).toString('hex'), opts.signal);
  try {
    await measure(ctx, net, rec, session, report, opts);
  } catch (e) {
    if (opts.signal?.aborted) throw new PodscopeError('Canceled', `probe of sandbox ${rec.id} canceled`);
    report.errors.push((e as Error).message);
  } finally {
    await session.close();
  }
  // what the paths really used: connects, DNS queries (UDP, TCP), the MTU audit's echoes
  report.measuredBy = measuredByText(report);
  report.durationMs = performance.now() - t0;
  return report;
}

/** plans every path, makes every planned connect at once, and judges each; fills `report` */
async function measure(ctx: ProbeDeps, net: ProbeNet, rec: PodFacts, session: ProbeSession, report: ProbeReport, opts: ProbeOptions) {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 1500;
  const bannerMs = opts.bannerMs ?? 400;
  const others = await readyOthers(ctx, rec);
  const attachments = await attachmentsOf(ctx, net, rec, report.errors, opts.signal);
  const sharesHostPort = (o: PodFacts) =>
    o.config.port_mappings.some(
      (om) => om.host_port > 0 && rec.config.port_mappings.some((m) => m.host_port === om.host_port && m.protocol === om.protocol),
    );
  // Peers are bounded per network (each is a Node agent started in its namespace), newest first; every pod sharing a
  // host port is kept, since a connection DNATed to it must be recognised as shadowed.
  const peersOf = new Map<string, PodFacts[]>();
  report.networks = attachments.map((att) => {
    const onIt = others.filter((o) => onNetwork(o, att.network));
    const peers = [...onIt].sort(newestFirst).slice(0, PROBE_PEERS_MAX);
    peersOf.set(att.network, peers);
    const kind = childKind(att);
    return {
      network: att.network,
      interface: att.ifName,
      plugins: att.plugins.map((p) => p.type),
      ...(att.link?.kind ? { linkKind: att.link.kind } : kind ? { linkKind: kind } : {}),
      ...(att.link?.parent ? { parent: att.link.parent.name } : {}),
      ...(onIt.length > 0 ? { peers: { ready: onIt.length, measured: peers.length } } : {}),
    };
  });
  const eth0Peers = report.networks.find((n) => n.interface === 'eth0')?.peers;
  if (eth0Peers) report.peers = eth0Peers;
  const measuredPeers = new Set([...peersOf.values()].flat());
  const involved = others.filter((o) => measuredPeers.has(o) || sharesHostPort(o));
  // every agent starts at once: a node start-up is most of a probe's time
  await Promise.all([
    session.open('host', undefined),
    session.open(rec.id, rec.netnsPath),
    ...involved.map((o) => session.open(o.id, o.netnsPath)),
  ]);
  const containerPorts = await containerPortsOf(ctx, [rec, ...measuredPeers], report.errors);
  const input: PlanInput = { rec, session, others, attachments, hostAddresses: new Set(net.hostAddresses()), containerPorts };
  const dnat = await net.hostportDnatRules(opts.signal);
  const plan: ProbePlan = { connects: [], decided: report.paths, errors: report.errors };
  await planPortMappings(input, plan);
  await planGateways(input, plan);
  await planPeers(input, plan, peersOf);
  const resolvConf = await ctx.resolvConf?.(rec).catch(() => undefined);
  // no dns_config servers and no resolv.conf to read (an engine without sandbox files): nothing to say about DNS
  if (resolvConf !== undefined || (rec.config.dns_config?.servers.length ?? 0) > 0) {
    report.dns = podDns(rec, resolvConf, opts.dnsName);
    planDns(rec, report.dns, attachments, plan);
  }
  // an attachment with nothing to measure says so: an empty list would read as "nothing wrong"
  for (const n of report.networks) {
    const covered = (p: ProbePath) => p.interface === n.interface && p.kind !== 'dns';
    if (!plan.connects.some((c) => covered(c.path)) && !report.paths.some(covered))
      report.errors.push(
        `nothing to measure on ${n.interface} (${n.network}): no gateway address, no host port mapped through it and no ready peer on its network`,
      );
  }

  const order = { v4: dnatChainOrder(dnat.v4), v6: dnatChainOrder(dnat.v6) };
  const resetIfBanner = session.answerPrefix;
  const traced = opts.trace ? await beginTrace(ctx, net, rec, input, plan, report, opts.signal) : undefined;
  let records: TracedFlow[] | undefined;
  let outcomes: Array<ConnectOutcome | DnsOutcome>;
  // the MTU audit runs beside the connects: its echoes are ICMP, which no TRACE rule of the connects matches
  const audit =
    opts.mtu === false
      ? undefined
      : auditMtu({ net, session, rec, others, attachments, connects: plan.connects, signal: opts.signal }).catch((e: unknown) => ({
          byIndex: new Map<number, PathMtu>(),
          errors: [`path MTU: ${(e as Error).message}`],
        }));
  try {
    outcomes = await Promise.all(
      plan.connects.map((p, i): Promise<ConnectOutcome | DnsOutcome> => {
        const agent = session.agent(p.fromAgent);
        const localPort = traced?.flows[i]!.sport;
        if (p.dns)
          return agent.dns
            ? agent.dns(p.host, p.port, p.dns.name, p.dns.qtype, connectTimeoutMs, { localPort })
            : Promise.resolve({ kind: 'error', error: 'this engine cannot send DNS queries' });
        return agent.connect(p.host, p.port, connectTimeoutMs, p.existing ? bannerMs : connectTimeoutMs, { resetIfBanner, localPort });
      }),
    );
  } finally {
    // every TRACE rule comes out and every monitor ends, whatever the connects did
    if (traced) records = await finishTrace(traced, report);
    const cap = traced?.active.capture;
    if (cap) report.capture = { pcapngBase64: cap.pcapng.toString('base64'), interfaces: cap.interfaces, packets: cap.packets };
  }
  const mtus = await audit;
  // undefined: not asked for, or this engine cannot audit MTU
  if (mtus) {
    report.errors.push(...mtus.errors);
    report.mtuAudited = true;
  }
  plan.connects.forEach((p, i) => {
    const winner =
      p.path.kind === 'hostPort'
        ? (p.path.family === 6 ? order.v6 : order.v4)(rec.config.port_mappings[p.path.mappingIndex!]!.host_port, p.path.proto)[0]
        : undefined;
    const raw = outcomes[i]!;
    const outcome = p.dns ? asConnectOutcome(raw as DnsOutcome) : (raw as ConnectOutcome);
    const path = p.dns
      ? judgeDns(p, raw as DnsOutcome, connectTimeoutMs, unreachableNote)
      : judge(p, outcome, session.nonce, others, winner);
    if (traced && records) explainPath(ctx, path, p, outcome, traced, i, records[i]!, [rec, ...others]);
    const mtu = mtus?.byIndex.get(i);
    if (mtu) path.mtu = mtu;
    report.paths.push(path);
  });
  if (traced && records) report.traced = true;
}

/** each pod's containers' declared ports (a pod whose containers could not be read has its port mappings still) */
async function containerPortsOf(ctx: ProbeDeps, pods: PodFacts[], errors: string[]): Promise<Map<string, DeclaredPort[]>> {
  const out = new Map<string, DeclaredPort[]>();
  const read = ctx.declaredPorts;
  if (!read) return out;
  await Promise.all(
    pods.map(async (p) => {
      try {
        out.set(p.id, await read(p));
      } catch (e) {
        errors.push(`the ports ${podName(p)}'s containers declare: ${(e as Error).message}; its port mappings' ports are probed still`);
      }
    }),
  );
  return out;
}

interface RunningTrace {
  tracer: ProbeTracer;
  active: Awaited<ReturnType<ProbeTracer['begin']>>;
  flows: FlowToTrace[];
}

/** a source port per planned connect, then monitors and TRACE rules in every netns the connects cross */
async function beginTrace(
  ctx: ProbeDeps,
  net: ProbeNet,
  rec: PodFacts,
  input: PlanInput,
  plan: ProbePlan,
  report: ProbeReport,
  signal: AbortSignal | undefined,
): Promise<RunningTrace | undefined> {
  const tracer = ctx.tracer;
  if (!tracer) {
    report.errors.push('tracing is not available from this engine: no path was traced');
    return undefined;
  }
  // each connect is traced with the addresses of the network it crosses
  const contextOf = (att: ProbedAttachment | undefined): FlowContext =>
    att
      ? { rec, others: input.others, podIps: att.ips, gateways: att.gateways, eth0Ips: (r) => ipsOn(r, att.network), node: ctx.node }
      : { rec, others: input.others, podIps: eth0Ips(rec), gateways: [], eth0Ips, node: ctx.node };
  const flows = plan.connects.map((p) =>
    flowSpecFor(p, contextOf(input.attachments.find((a) => a.network === p.path.network)), tracer.allocatePort()),
  );
  try {
    return { tracer, flows, active: await tracer.begin(flows, signal) };
  } catch (e) {
    for (const f of flows) tracer.releasePort(f.sport);
    report.errors.push(`could not start tracing: ${(e as Error).message}`);
    return undefined;
  }
}

async function finishTrace(t: RunningTrace, report: ProbeReport): Promise<TracedFlow[] | undefined> {
  try {
    return await t.active.finish();
  } catch (e) {
    report.errors.push(`tracing: ${(e as Error).message}`);
    return undefined;
  } finally {
    for (const f of t.flows) t.tracer.releasePort(f.sport);
  }
}

function explainPath(
  ctx: ProbeDeps,
  path: ProbePath,
  p: PlannedConnect,
  outcome: ConnectOutcome,
  t: RunningTrace,
  index: number,
  record: TracedFlow,
  known: PodFacts[],
) {
  const i = t.flows.findIndex(
    (f) => f.dst === p.host && f.dport === p.port && f.netns[0]!.key === (p.fromAgent === 'host' ? 'host' : p.fromAgent),
  );
  const flow = t.flows[i]!;
  const target = flow.netns.find((n) => n.key === p.expect) ?? flow.netns[flow.netns.length - 1]!;
  const missing = [...t.active.missing, ...record.missing];
  const { steps, why, partial } = t.tracer.explain({
    flow,
    record,
    path,
    outcome,
    known: known.map((r) => ({ id: r.id, network: eth0Network(r), ips: eth0Ips(r) })),
    target,
    podName: (id) => podName(ctx.pods.find(id)),
    missing,
  });
  // an isolated path keeps the rule of the plugin's design first; the trace says what the kernel did
  path.why = path.why ? `${path.why}. Traced: ${why}` : why;
  // on another node every step names it: "host" there is the node's netns, not this machine's
  const nodeOf = new Map(flow.netns.map((n) => [n.key, n.node]));
  for (const s of steps) {
    const node = nodeOf.get(s.netns);
    if (node !== undefined) s.node = node;
  }
  path.trace = { flow: { sport: flow.sport, dst: flow.dst, dport: flow.dport }, steps, missing, ...(partial && { partial }) };
  // the path's own download: its flow's packets only, not the probe's every flow
  if (record.capture)
    path.trace.capture = {
      pcapngBase64: record.capture.pcapng.toString('base64'),
      interfaces: record.capture.interfaces,
      packets: record.capture.packets,
    };
}

async function notApplicableReason(ctx: ProbeDeps, rec: PodFacts): Promise<string | undefined> {
  if (isHostNetwork(rec.config)) return 'host network: the sandbox has no network namespace of its own';
  if (rec.state !== 'Ready')
    return `sandbox is ${rec.state === 'NotReady' ? 'NOTREADY (its pause process is gone)' : 'not ready'}: nothing is measured`;
  if (!rec.netnsPath || rec.netnsClosed || (await ctx.netnsClosed(rec.netnsPath))) return 'stopped: its network namespace was removed';
  return undefined;
}

/** createdAtNs is a decimal string: padded, it compares as text (and an odd one cannot throw, as BigInt would) */
function newestFirst(a: PodFacts, b: PodFacts): number {
  const [x, y] = [a.createdAtNs.padStart(24, '0'), b.createdAtNs.padStart(24, '0')];
  return x === y ? a.id.localeCompare(b.id) : x > y ? -1 : 1;
}

async function readyOthers(ctx: ProbeDeps, rec: PodFacts): Promise<PodFacts[]> {
  const out: PodFacts[] = [];
  for (const o of ctx.pods.all()) {
    if (o.id === rec.id || isHostNetwork(o.config)) continue;
    await ctx.refreshLiveness(o);
    if (o.state === 'Ready' && o.netnsPath && !o.netnsClosed) out.push(o);
  }
  return out;
}

function eth0Network(rec: PodFacts): string | undefined {
  return rec.network?.networks.find((n) => n.ifName === 'eth0')?.network;
}

/** The paths a probe would measure, before measuring (for stopped/NOTREADY/host-network sandboxes). */
function plannedPaths(rec: PodFacts): Array<Omit<ProbePath, 'verdict' | 'measured' | 'note'>> {
  const out: Array<Omit<ProbePath, 'verdict' | 'measured' | 'note'>> = [];
  for (const [index, m] of rec.config.port_mappings.entries()) {
    const proto = protocolName(m.protocol).toLowerCase();
    if (m.host_port > 0)
      out.push({ kind: 'hostPort', from: 'host', to: fmtAddr(m.host_ip || '127.0.0.1', m.host_port), proto, mappingIndex: index });
    else out.push({ kind: 'podPort', from: 'host', to: fmtAddr(rec.ip || 'pod', m.container_port), proto, mappingIndex: index });
  }
  if (!isHostNetwork(rec.config)) out.push({ kind: 'gateway', from: 'pod', to: 'gateway', proto: 'tcp' });
  return out;
}
