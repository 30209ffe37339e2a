/**
 * Which connections a probe makes, path kind by path kind. Planning opens the responders a connection needs (through
 * the session) but connects nothing: every planned connect then runs at once, so the probe's time is one connect
 * timeout, not the sum of them. A path that cannot be measured is reported here with the reason.
 */
import { protocolName } from '../../../shared/domain/config';
import { hostIpsOverlap, type ProbePath } from '../../../shared/domain/probe';
import type { SandboxRecord } from '../sandbox/record';
import type { AgentKey, ProbeSession } from './session';

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
}

/** What planning produced: connects to make, and paths already decided (not applicable, not measured). */
export interface ProbePlan {
  connects: PlannedConnect[];
  decided: ProbePath[];
  errors: string[];
}

export interface PlanInput {
  rec: SandboxRecord;
  session: ProbeSession;
  /** other ready sandboxes (any network) */
  others: SandboxRecord[];
  /** the sandbox's eth0 addresses */
  podIps: string[];
  /** eth0's gateways */
  gateways: string[];
  hostAddresses: Set<string>;
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
): ProbePath {
  const p: ProbePath = { kind, from, to, proto, verdict, measured: false, note };
  if (mappingIndex !== undefined) p.mappingIndex = mappingIndex;
  return p;
}

const onlyTcp = (proto: string) => `only TCP is measured; ${proto} derived from configuration`;

/** host → each host port (loopback, the bridge gateway addresses, or host_ip) and host → pod IP for container-only ports */
export async function planPortMappings(input: PlanInput, plan: ProbePlan): Promise<void> {
  const { rec } = input;
  for (const [index, m] of rec.config.port_mappings.entries()) {
    const proto = protocolName(m.protocol).toLowerCase();
    if (m.host_port > 0) await planHostPort(input, plan, index, proto);
    else await planPodPort(input, plan, index, proto);
  }
}

async function planHostPort(input: PlanInput, plan: ProbePlan, index: number, proto: string): Promise<void> {
  const { rec, session, podIps } = input;
  const m = rec.config.port_mappings[index]!;
  const targets: Array<{ ip: string; why: string }> = [];
  if (m.host_ip) {
    if (input.hostAddresses.has(m.host_ip)) targets.push({ ip: m.host_ip, why: 'host_ip' });
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
        ),
      );
  } else {
    if (podIps.some((ip) => familyOf(ip) === 4)) targets.push({ ip: '127.0.0.1', why: 'loopback' });
    for (const gw of input.gateways) targets.push({ ip: gw, why: 'bridge gateway address' });
  }
  for (const t of targets) {
    const path = newPath('hostPort', 'host', fmtAddr(t.ip, m.host_port), proto, index, 'timeout', '');
    path.family = familyOf(t.ip);
    if (proto !== 'tcp') {
      plan.decided.push({ ...path, verdict: 'notApplicable', note: onlyTcp(proto) });
      continue;
    }
    if (t.ip !== '127.0.0.1' && podIps.every((ip) => familyOf(ip) !== familyOf(t.ip))) continue;
    let existing: boolean;
    try {
      existing = await session.ensurePort(rec.id, rec.netnsPath!, m.container_port);
    } catch (e) {
      plan.decided.push({ ...path, note: `not measured: ${(e as Error).message}` });
      continue;
    }
    await answerInRivals(input, plan, m.host_port, m.host_ip, proto);
    plan.connects.push({ path, fromAgent: 'host', host: t.ip, port: m.host_port, expect: rec.id, existing });
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

async function planPodPort(input: PlanInput, plan: ProbePlan, index: number, proto: string): Promise<void> {
  const { rec, session } = input;
  const m = rec.config.port_mappings[index]!;
  for (const ip of input.podIps) {
    const path = newPath('podPort', 'host', fmtAddr(ip, m.container_port), proto, index, 'timeout', '');
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
    plan.connects.push({ path, fromAgent: 'host', host: ip, port: m.container_port, expect: rec.id, existing });
  }
}

/** pod → gateway: a listener on the host side, on the gateway address itself */
export async function planGateways(input: PlanInput, plan: ProbePlan): Promise<void> {
  const host = input.session.agent('host');
  for (const gw of input.gateways) {
    try {
      const port = await host.respond(0, input.session.banner('host'), gw);
      const path = newPath('gateway', 'pod', fmtAddr(gw, port), 'tcp', undefined, 'timeout', '');
      path.family = familyOf(gw);
      plan.connects.push({ path, fromAgent: input.rec.id, host: gw, port, expect: 'host', existing: false });
    } catch (e) {
      plan.decided.push({
        ...newPath('gateway', 'pod', gw, 'tcp', undefined, 'timeout', `not measured: ${(e as Error).message}`),
        family: familyOf(gw),
      });
    }
  }
}

/** pod ↔ each measured peer on the same network, in every family both have, each way */
export async function planPeers(input: PlanInput, plan: ProbePlan, peers: SandboxRecord[]): Promise<void> {
  const { rec, session, podIps } = input;
  for (const o of peers) {
    const peerIps = eth0Ips(o);
    await session.open(o.id, o.netnsPath);
    for (const fam of [4, 6] as const) {
      const mine = podIps.find((ip) => familyOf(ip) === fam);
      const theirs = peerIps.find((ip) => familyOf(ip) === fam);
      if (!mine || !theirs) continue;
      const theirPort = await session.agent(o.id).respond(0, session.banner(o.id));
      const myPort = await session.agent(rec.id).respond(0, session.banner(rec.id));
      const out = newPath('peer', 'pod', fmtAddr(theirs, theirPort), 'tcp', undefined, 'timeout', '');
      out.family = fam;
      const back = newPath('peer', `peer ${o.config.metadata.name}`, fmtAddr(mine, myPort), 'tcp', undefined, 'timeout', '');
      back.family = fam;
      plan.connects.push({ path: out, fromAgent: rec.id, host: theirs, port: theirPort, expect: o.id, existing: false });
      plan.connects.push({ path: back, fromAgent: o.id, host: mine, port: myPort, expect: rec.id, existing: false });
    }
  }
}

/** eth0's addresses in CNI order (the IP selection's record of them, or the selected IPs for older records) */
export function eth0Ips(rec: SandboxRecord): string[] {
  return rec.ipSelection?.eth0Ips ?? [rec.ip, ...rec.additionalIps].filter(Boolean);
}
