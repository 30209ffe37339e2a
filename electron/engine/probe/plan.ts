/**
 * Which connections a probe makes, path kind by path kind, on every network the pod is attached to. Planning opens the
 * responders a connection needs (through the session) but connects nothing: every planned connect then runs at once,
 * so the probe's time is one connect timeout, not the sum of them. A path that cannot be measured is reported here
 * with the reason; a path the attachment's plugin forbids by design is planned with that rule (isolation.ts).
 */
import { protocolName } from '../../../shared/domain/config';
import { hostIpsOverlap, type DnsQueryResult, type ProbePath } from '../../../shared/domain/probe';
import type { PodFacts } from '../common/pod-facts';
import { ipsOn, type ProbedAttachment } from './attachments';
import type { DeclaredPort } from './deps';
import { forbiddenBy } from './isolation';
import type { AgentKey, ProbeSession } from './session';

export { eth0Ips } from './attachments';

export interface PlannedConnect {
  path: ProbePath;
  /** who connects: the host agent, this pod's, or a peer's */
  fromAgent: AgentKey;
  host: string;
  port: number;
  /** the sandbox whose answer means "reachable" ("host" for the gateway path) */
  expect: AgentKey;
  /** the port in `expect` has an existing listener (no banner expected) */
  existing: boolean;
  /** the rule of the plugin's design that forbids this path: no answer is then `isolated`, not a failure */
  forbidden?: string;
  /** a DNS path: a query for this name instead of a TCP connect (dns.ts) */
  dns?: DnsQueryResult;
}

/** What planning produced: connects to make, and paths already decided (not applicable, not measured). */
export interface ProbePlan {
  connects: PlannedConnect[];
  decided: ProbePath[];
  errors: string[];
}

export interface PlanInput {
  rec: PodFacts;
  session: ProbeSession;
  /** other ready sandboxes (any network) */
  others: PodFacts[];
  /** the pod's attachments, eth0 first */
  attachments: ProbedAttachment[];
  hostAddresses: Set<string>;
  /** the ports each pod's containers declare, by pod id (absent: none known) */
  containerPorts?: Map<string, DeclaredPort[]>;
}

export const fmtAddr = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
export const familyOf = (ip: string): 4 | 6 => (ip.includes(':') ? 6 : 4);

export function newPath(
  kind: ProbePath['kind'],
  from: string,
  to: string,
  proto: string,
  mappingIndex: number | undefined,
  verdict: ProbePath['verdict'],
  note: string,
  att?: Pick<ProbedAttachment, 'network' | 'ifName'>,
): ProbePath {
  const p: ProbePath = { kind, from, to, proto, verdict, measured: false, note };
  if (mappingIndex !== undefined) p.mappingIndex = mappingIndex;
  if (att) {
    p.network = att.network;
    p.interface = att.ifName;
  }
  return p;
}

const hasPortmap = (a: ProbedAttachment) => a.plugins.some((p) => p.type === 'portmap');

const onlyTcp = (proto: string) => `only TCP is measured; ${proto} derived from configuration`;

/**
 * host → each host port, per network whose chain has portmap (127.0.0.1 and host_ip on the first of them, each
 * one's gateway addresses on its own), and host → every pod address for container-only ports
 */
export async function planPortMappings(input: PlanInput, plan: ProbePlan): Promise<void> {
  const { rec } = input;
  // a chain read from neither the cache nor the conf dir: eth0's network is measured as if it had portmap
  const mapped = input.attachments.filter(hasPortmap);
  const viaPortmap = mapped.length > 0 ? mapped : input.attachments.slice(0, 1);
  for (const [index, m] of rec.config.port_mappings.entries()) {
    const proto = protocolName(m.protocol).toLowerCase();
    if (m.host_port > 0) await planHostPort(input, plan, index, proto, viaPortmap);
    else for (const att of input.attachments) await planPodPort(input, plan, index, proto, att);
  }
}

async function planHostPort(input: PlanInput, plan: ProbePlan, index: number, proto: string, via: ProbedAttachment[]): Promise<void> {
  const { rec, session } = input;
  const m = rec.config.port_mappings[index]!;
  const targets: Array<{ ip: string; att: ProbedAttachment }> = [];
  const first = via[0];
  if (!first) return;
  if (m.host_ip) {
    if (input.hostAddresses.has(m.host_ip)) targets.push({ ip: m.host_ip, att: first });
    else
      plan.decided.push(
        newPath(
          'hostPort',
          'host',
          fmtAddr(m.host_ip, m.host_port),
          proto,
          index,
          'notApplicable',
          `host_ip ${m.host_ip} is not an address of this host: not probed (traffic never leaves the host)`,
          first,
        ),
      );
  } else {
    if (first.ips.some((ip) => familyOf(ip) === 4)) targets.push({ ip: '127.0.0.1', att: first });
    for (const att of via) for (const gw of att.gateways) targets.push({ ip: gw, att });
  }
  for (const { ip, att } of targets) {
    const path = newPath('hostPort', 'host', fmtAddr(ip, m.host_port), proto, index, 'timeout', '', att);
    path.family = familyOf(ip);
    if (proto !== 'tcp') {
      plan.decided.push({ ...path, verdict: 'notApplicable', note: onlyTcp(proto) });
      continue;
    }
    if (ip !== '127.0.0.1' && att.ips.every((a) => familyOf(a) !== familyOf(ip))) {
      plan.decided.push({
        ...path,
        verdict: 'notApplicable',
        note: `the pod has no IPv${familyOf(ip)} address on ${att.network}: portmap maps this family to nothing`,
      });
      continue;
    }
    let existing: boolean;
    try {
      existing = await session.ensurePort(rec.id, rec.netnsPath!, m.container_port);
    } catch (e) {
      plan.decided.push({ ...path, note: `not measured: ${(e as Error).message}` });
      continue;
    }
    await answerInRivals(input, plan, m.host_port, m.host_ip, proto);
    const forbidden = forbiddenBy(att, { kind: 'fromHost' });
    plan.connects.push({ path, fromAgent: 'host', host: ip, port: m.host_port, expect: rec.id, existing, forbidden });
  }
}

/** every other ready pod holding this host port answers too, so a connection that lands there is named */
async function answerInRivals(input: PlanInput, plan: ProbePlan, hostPort: number, hostIp: string, proto: string): Promise<void> {
  for (const o of input.others) {
    const rival = o.config.port_mappings.some(
      (om) => om.host_port === hostPort && protocolName(om.protocol).toLowerCase() === proto && hostIpsOverlap(om.host_ip, hostIp),
    );
    if (!rival) continue;
    for (const om of o.config.port_mappings.filter((x) => x.host_port === hostPort))
      await input.session.ensurePort(o.id, o.netnsPath!, om.container_port).catch((e: unknown) => plan.errors.push((e as Error).message));
  }
}

async function planPodPort(input: PlanInput, plan: ProbePlan, index: number, proto: string, att: ProbedAttachment): Promise<void> {
  const { rec, session } = input;
  const m = rec.config.port_mappings[index]!;
  for (const ip of att.ips) {
    const path = newPath('podPort', 'host', fmtAddr(ip, m.container_port), proto, index, 'timeout', '', att);
    path.family = familyOf(ip);
    if (proto !== 'tcp') {
      plan.decided.push({ ...path, verdict: 'notApplicable', note: onlyTcp(proto) });
      continue;
    }
    let existing: boolean;
    try {
      existing = await session.ensurePort(rec.id, rec.netnsPath!, m.container_port);
    } catch (e) {
      plan.decided.push({ ...path, note: `not measured: ${(e as Error).message}` });
      continue;
    }
    const forbidden = forbiddenBy(att, { kind: 'fromHost' });
    plan.connects.push({ path, fromAgent: 'host', host: ip, port: m.container_port, expect: rec.id, existing, forbidden });
  }
}

/** pod → each network's gateway: a listener on the host side, on the gateway address itself */
export async function planGateways(input: PlanInput, plan: ProbePlan): Promise<void> {
  const host = input.session.agent('host');
  for (const att of input.attachments)
    for (const gw of att.gateways) {
      const family = familyOf(gw);
      try {
        const port = await host.respond(0, input.session.banner('host'), gw);
        const path = newPath('gateway', 'pod', fmtAddr(gw, port), 'tcp', undefined, 'timeout', '', att);
        path.family = family;
        const forbidden = forbiddenBy(att, { kind: 'toHost', address: gw });
        plan.connects.push({ path, fromAgent: input.rec.id, host: gw, port, expect: 'host', existing: false, forbidden });
      } catch (e) {
        // a gateway outside this host (a router on a macvlan's or host-device's wire) has nothing the probe may listen on
        const outside = !input.hostAddresses.has(gw) && /EADDRNOTAVAIL/.test((e as Error).message);
        const note = outside
          ? `gateway ${gw} is not an address of this host: the probe listens only on the host's own addresses, so a router outside it is not measured`
          : `not measured: ${(e as Error).message}`;
        plan.decided.push({ ...newPath('gateway', 'pod', gw, 'tcp', undefined, outside ? 'notApplicable' : 'timeout', note, att), family });
      }
    }
}

/**
 * pod ↔ each measured peer on the same network, in every family both have there, each way: the network path (to a
 * responder on a port the probe picks) and a path to every port the receiving pod declares (declaredPorts)
 */
export async function planPeers(input: PlanInput, plan: ProbePlan, peersOf: Map<string, PodFacts[]>): Promise<void> {
  const { rec, session } = input;
  for (const att of input.attachments) {
    const forbidden = forbiddenBy(att, { kind: 'peer' });
    for (const o of peersOf.get(att.network) ?? []) {
      const peerIps = ipsOn(o, att.network);
      await session.open(o.id, o.netnsPath);
      const peerLabel = `peer ${o.config.metadata.name}`;
      for (const fam of [4, 6] as const) {
        const mine = att.ips.find((ip) => familyOf(ip) === fam);
        const theirs = peerIps.find((ip) => familyOf(ip) === fam);
        if (!mine || !theirs) continue;
        const theirPort = await session.agent(o.id).respond(0, session.banner(o.id));
        const myPort = await session.agent(rec.id).respond(0, session.banner(rec.id));
        const out = newPath('peer', 'pod', fmtAddr(theirs, theirPort), 'tcp', undefined, 'timeout', '', att);
        out.family = fam;
        const back = newPath('peer', peerLabel, fmtAddr(mine, myPort), 'tcp', undefined, 'timeout', '', att);
        back.family = fam;
        plan.connects.push({ path: out, fromAgent: rec.id, host: theirs, port: theirPort, expect: o.id, existing: false, forbidden });
        plan.connects.push({ path: back, fromAgent: o.id, host: mine, port: myPort, expect: rec.id, existing: false, forbidden });
        const leg = { att, family: fam, forbidden };
        await planPeerPorts(input, plan, { ...leg, from: rec.id, fromLabel: 'pod', to: o, host: theirs });
        await planPeerPorts(input, plan, { ...leg, from: o.id, fromLabel: peerLabel, to: rec, host: mine });
      }
    }
  }
}

/** a port a pod declares, once per port and protocol, with every place that declares it */
export interface PodPort {
  port: number;
  proto: string;
  declaredBy: string;
}

/**
 * The ports a pod declares, in port order: its port mappings' container ports (hostPort or not: kubelet lists every
 * container port of the pod there) and its containers' EXPOSEd ports.
 */
export function declaredPorts(pod: PodFacts, containers: DeclaredPort[] = []): PodPort[] {
  const byKey = new Map<string, { port: number; proto: string; by: string[] }>();
  const add = (port: number, proto: string, by: string) => {
    if (!(port > 0 && port < 65536)) return;
    const key = `${proto}/${port}`;
    const e = byKey.get(key) ?? { port, proto, by: [] };
    if (!e.by.includes(by)) e.by.push(by);
    byKey.set(key, e);
  };
  pod.config.port_mappings.forEach((m, i) => add(m.container_port, protocolName(m.protocol).toLowerCase(), `port mapping ${i}`));
  for (const c of containers) add(c.port, c.proto, `container ${c.container} (EXPOSE ${c.port}/${c.proto})`);
  return [...byKey.values()]
    .sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto))
    .map((e) => ({ port: e.port, proto: e.proto, declaredBy: e.by.join(', ') }));
}

/** one direction of a peer pair: a connect to every port the receiving pod declares, its own listener or a responder */
async function planPeerPorts(
  input: PlanInput,
  plan: ProbePlan,
  leg: {
    att: ProbedAttachment;
    family: 4 | 6;
    forbidden: string | undefined;
    from: string;
    fromLabel: string;
    to: PodFacts;
    host: string;
  },
): Promise<void> {
  const { att, to } = leg;
  for (const d of declaredPorts(to, input.containerPorts?.get(to.id))) {
    const path = newPath('peerPort', leg.fromLabel, fmtAddr(leg.host, d.port), d.proto, undefined, 'timeout', '', att);
    path.family = leg.family;
    path.declaredBy = d.declaredBy;
    if (d.proto !== 'tcp') {
      plan.decided.push({ ...path, verdict: 'notApplicable', note: onlyTcp(d.proto) });
      continue;
    }
    let existing: boolean;
    try {
      existing = await input.session.ensurePort(to.id, to.netnsPath!, d.port);
    } catch (e) {
      plan.decided.push({ ...path, note: `not measured: ${(e as Error).message}` });
      continue;
    }
    plan.connects.push({ path, fromAgent: leg.from, host: leg.host, port: d.port, expect: to.id, existing, forbidden: leg.forbidden });
  }
}
