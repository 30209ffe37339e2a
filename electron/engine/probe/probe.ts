/**
 * Reachability measured with real packets. For one sandbox:
 *  - hostPort: every mapping that reached portmap, from the host to 127.0.0.1, to the bridge gateway address, and
 *    to host_ip when one was given;
 *  - podPort: every mapping with host_port <= 0 (never passed to CNI), from the host to podIP:containerPort;
 *  - gateway: from the pod to a listener the probe opens on the gateway address on the host side;
 *  - peer: to and from the newest other ready sandboxes on the same network (PROBE_PEERS_MAX; the report says how
 *    many of how many), in both families.
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
  PROBE_PEERS_MAX,
  type ProbePath,
  type ProbeReport,
  hostIpsOverlap,
} from '../../../shared/domain/probe';
import type { EngineContext } from '../sandbox/context';
import type { SandboxRecord } from '../sandbox/record';
import { refreshLiveness } from '../sandbox/status';
import { notFoundError } from '../sandbox/store';
import type { ConnectOutcome, ProbeAgent, ProbeNet } from './types';

export interface ProbeOptions {
  trigger?: ProbeReport['trigger'];
  signal?: AbortSignal;
  /** per connect (default 1500 ms): a DNAT to nowhere shows up as a timeout this long */
  connectTimeoutMs?: number;
  /** how long to wait for a responder's banner after connecting (default 400 ms) */
  bannerMs?: number;
}

const BANNER = 'PODSCOPE-PROBE';
const fmt = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
const familyOf = (ip: string): 4 | 6 => (ip.includes(':') ? 6 : 4);

interface PlannedConnect {
  path: ProbePath;
  /** who connects: the host agent, this pod's, or a peer's */
  fromAgent: 'host' | string;
  host: string;
  port: number;
  /** the sandbox whose answer means "reachable" */
  expect: string;
  /** the port in `expect` has an existing listener (no banner expected) */
  existing: boolean;
}

export async function probeSandbox(ctx: EngineContext, net: ProbeNet, idOrPrefix: string, opts: ProbeOptions = {}): Promise<ProbeReport> {
  const id = ctx.store.index.resolve(idOrPrefix);
  const rec = id === undefined ? undefined : ctx.store.get(id);
  if (!rec) throw notFoundError(idOrPrefix);
  const started = new Date();
  const t0 = performance.now();
  const report: ProbeReport = {
    sandboxId: rec.id,
    measuredAt: started.toISOString(),
    measuredBy: PROBE_MEASURED_BY,
    durationMs: 0,
    trigger: opts.trigger ?? 'onDemand',
    paths: [],
    errors: [],
  };
  // a pause that died since the last poll must not be probed as ready
  await refreshLiveness(ctx, rec);
  const reason = await notApplicableReason(ctx, rec);
  if (reason) {
    report.paths = plannedPaths(rec).map((p) => ({ ...p, verdict: 'notApplicable', measured: false, note: reason }));
    report.durationMs = performance.now() - t0;
    return report;
  }
  const connectTimeoutMs = opts.connectTimeoutMs ?? 1500;
  const bannerMs = opts.bannerMs ?? 400;
  const nonce = randomBytes(8).toString('hex');
  const banner = (sid: string) => `${BANNER} ${nonce} ${sid}\n`;
  const agents = new Map<string, ProbeAgent>();
  const listenersOf = new Map<string, Set<number>>();
  const open = async (key: string, netnsPath: string | undefined) => {
    let a = agents.get(key);
    if (!a) {
      a = await net.open(netnsPath, opts.signal);
      agents.set(key, a);
      if (netnsPath !== undefined) listenersOf.set(key, new Set(await a.listeners()));
    }
    return a;
  };
  /** a responder on `port` in sandbox `sid` unless something listens there already; returns whether one existed */
  const responders = new Map<string, boolean>();
  const ensurePort = async (sid: string, netnsPath: string, port: number): Promise<boolean> => {
    const key = `${sid}/${port}`;
    const known = responders.get(key);
    if (known !== undefined) return known;
    const agent = await open(sid, netnsPath);
    const existing = listenersOf.get(sid)!.has(port);
    if (!existing) await agent.respond(port, banner(sid));
    responders.set(key, existing);
    return existing;
  };

  try {
    const others = await readyOthers(ctx, rec);
    const network = eth0Network(rec);
    const sharesHostPort = (o: SandboxRecord) =>
      o.config.port_mappings.some(
        (om) => om.host_port > 0 && rec.config.port_mappings.some((m) => m.host_port === om.host_port && m.protocol === om.protocol),
      );
    // every agent starts at once: a node start-up is most of a probe's time
    // Peers are bounded (each is a Node agent started in its namespace), newest first; every pod sharing a host port
    // is kept, since a connection DNATed to it must be recognised as shadowed.
    const onNetwork = others.filter((o) => network !== undefined && eth0Network(o) === network);
    const peers = [...onNetwork].sort(newestFirst).slice(0, PROBE_PEERS_MAX);
    if (onNetwork.length > 0) report.peers = { ready: onNetwork.length, measured: peers.length };
    const involved = others.filter((o) => peers.includes(o) || sharesHostPort(o));
    await Promise.all([open('host', undefined), open(rec.id, rec.netnsPath), ...involved.map((o) => open(o.id, o.netnsPath))]);
    const host = agents.get('host')!;
    const plans: PlannedConnect[] = [];
    const podIps = rec.ipSelection?.eth0Ips ?? [rec.ip, ...rec.additionalIps].filter(Boolean);
    const gateways = (rec.network?.interfaces.eth0?.ipConfigs ?? []).flatMap((c) => (c.gateway ? [c.gateway] : []));
    const hostAddrs = new Set(net.hostAddresses());
    const dnat = await net.hostportDnatRules(opts.signal);

    for (const [index, m] of rec.config.port_mappings.entries()) {
      const proto = protocolName(m.protocol).toLowerCase();
      if (m.host_port > 0) {
        const targets: Array<{ ip: string; why: string }> = [];
        if (m.host_ip) {
          if (hostAddrs.has(m.host_ip)) targets.push({ ip: m.host_ip, why: 'host_ip' });
          else
            report.paths.push(
              base(
                'hostPort',
                'host',
                fmt(m.host_ip, m.host_port),
                proto,
                index,
                'notApplicable',
                `host_ip ${m.host_ip} is not an address of this host: not probed (traffic never leaves the host)`,
              ),
            );
        } else {
          if (podIps.some((ip) => familyOf(ip) === 4)) targets.push({ ip: '127.0.0.1', why: 'loopback' });
          for (const gw of gateways) targets.push({ ip: gw, why: 'bridge gateway address' });
        }
        for (const t of targets) {
          const path = base('hostPort', 'host', fmt(t.ip, m.host_port), proto, index, 'timeout', '');
          path.family = familyOf(t.ip);
          if (proto !== 'tcp') {
            report.paths.push({ ...path, verdict: 'notApplicable', note: `only TCP is measured; ${proto} derived from configuration` });
            continue;
          }
          if (t.ip !== '127.0.0.1' && podIps.every((ip) => familyOf(ip) !== familyOf(t.ip))) continue;
          let existing: boolean;
          try {
            existing = await ensurePort(rec.id, rec.netnsPath!, m.container_port);
          } catch (e) {
            report.paths.push({ ...path, note: `not measured: ${(e as Error).message}` });
            continue;
          }
          // every other ready pod holding this host port answers too, so a connection that lands there is named
          for (const o of others) {
            if (
              o.config.port_mappings.some(
                (om) =>
                  om.host_port === m.host_port &&
                  protocolName(om.protocol).toLowerCase() === proto &&
                  hostIpsOverlap(om.host_ip, m.host_ip),
              )
            ) {
              for (const om of o.config.port_mappings.filter((x) => x.host_port === m.host_port))
                await ensurePort(o.id, o.netnsPath!, om.container_port).catch((e: unknown) => report.errors.push((e as Error).message));
            }
          }
          plans.push({ path, fromAgent: 'host', host: t.ip, port: m.host_port, expect: rec.id, existing });
        }
      } else {
        for (const ip of podIps) {
          const path = base('podPort', 'host', fmt(ip, m.container_port), proto, index, 'timeout', '');
          path.family = familyOf(ip);
          if (proto !== 'tcp') {
            report.paths.push({ ...path, verdict: 'notApplicable', note: `only TCP is measured; ${proto} derived from configuration` });
            continue;
          }
          let existing: boolean;
          try {
            existing = await ensurePort(rec.id, rec.netnsPath!, m.container_port);
          } catch (e) {
            report.paths.push({ ...path, note: `not measured: ${(e as Error).message}` });
            continue;
          }
          plans.push({ path, fromAgent: 'host', host: ip, port: m.container_port, expect: rec.id, existing });
        }
      }
    }

    // pod → gateway: a listener on the host side, on the gateway address itself
    for (const gw of gateways) {
      try {
        const port = await host.respond(0, banner('host'), gw);
        const path = base('gateway', 'pod', fmt(gw, port), 'tcp', undefined, 'timeout', '');
        path.family = familyOf(gw);
        plans.push({ path, fromAgent: rec.id, host: gw, port, expect: 'host', existing: false });
      } catch (e) {
        report.paths.push({
          ...base('gateway', 'pod', gw, 'tcp', undefined, 'timeout', `not measured: ${(e as Error).message}`),
          family: familyOf(gw),
        });
      }
    }

    // pod ↔ every ready peer on the same network, each family both have
    for (const o of peers) {
      const peerIps = o.ipSelection?.eth0Ips ?? [o.ip, ...o.additionalIps].filter(Boolean);
      await open(o.id, o.netnsPath);
      for (const fam of [4, 6] as const) {
        const mine = podIps.find((ip) => familyOf(ip) === fam);
        const theirs = peerIps.find((ip) => familyOf(ip) === fam);
        if (!mine || !theirs) continue;
        const theirPort = await agents.get(o.id)!.respond(0, banner(o.id));
        const myPort = await agents.get(rec.id)!.respond(0, banner(rec.id));
        const out = base('peer', 'pod', fmt(theirs, theirPort), 'tcp', undefined, 'timeout', '');
        out.family = fam;
        const back = base('peer', `peer ${o.config.metadata.name}`, fmt(mine, myPort), 'tcp', undefined, 'timeout', '');
        back.family = fam;
        plans.push({ path: out, fromAgent: rec.id, host: theirs, port: theirPort, expect: o.id, existing: false });
        plans.push({ path: back, fromAgent: o.id, host: mine, port: myPort, expect: rec.id, existing: false });
      }
    }

    const order = { v4: dnatChainOrder(dnat.v4), v6: dnatChainOrder(dnat.v6) };
    const outcomes = await Promise.all(
      plans.map((p) =>
        agents
          .get(p.fromAgent)!
          .connect(p.host, p.port, connectTimeoutMs, p.existing ? bannerMs : connectTimeoutMs, { resetIfBanner: `${BANNER} ${nonce}` }),
      ),
    );
    plans.forEach((p, i) => {
      const winner =
        p.path.kind === 'hostPort'
          ? (p.path.family === 6 ? order.v6 : order.v4)(rec.config.port_mappings[p.path.mappingIndex!]!.host_port, p.path.proto)[0]
          : undefined;
      report.paths.push(judge(p, outcomes[i]!, nonce, others, winner));
    });
  } catch (e) {
    if (opts.signal?.aborted) throw new PodscopeError('Canceled', `probe of sandbox ${rec.id} canceled`);
    report.errors.push((e as Error).message);
  } finally {
    await Promise.all([...agents.values()].map((a) => a.close().catch(() => undefined)));
  }
  report.durationMs = performance.now() - t0;
  return report;
}

function base(
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

function judge(
  p: PlannedConnect,
  outcome: ConnectOutcome,
  nonce: string,
  others: SandboxRecord[],
  dnatWinner: string | undefined,
): ProbePath {
  const path: ProbePath = { ...p.path, measured: true, listener: p.expect === 'host' ? undefined : p.existing ? 'existing' : 'responder' };
  if (path.listener === undefined) delete path.listener;
  switch (outcome.kind) {
    case 'refused':
      return { ...path, verdict: 'refused', note: 'connection refused (RST)' };
    case 'timeout':
      return { ...path, verdict: 'timeout', note: 'no answer to the SYN in time' };
    case 'error':
      return { ...path, verdict: 'timeout', note: `not connected: ${outcome.error}` };
    case 'connected': {
      path.rttMs = Math.round(outcome.rttMs * 1000) / 1000;
      const m = outcome.banner ? new RegExp(`^${BANNER} ([0-9a-f]+) (\\S+)$`).exec(outcome.banner.trim()) : null;
      if (m && m[1] === nonce) {
        const who = m[2]!;
        if (who === p.expect)
          return {
            ...path,
            verdict: 'reachable',
            answeredBy: who === 'host' ? undefined : who,
            note: p.existing ? 'the listener answered' : 'nonce matched',
          };
        const name = podName(others.find((o) => o.id === who)) ?? who;
        return {
          ...path,
          verdict: 'shadowed',
          answeredBy: who,
          note: `the connection landed in sandbox ${name} (${who.slice(0, 12)}): its DNAT rule matches first`,
        };
      }
      if (p.existing) {
        // an existing listener sends no banner, so the DNAT chain order names who got the connection
        if (dnatWinner && dnatWinner !== p.expect) {
          const name = podName(others.find((o) => o.id === dnatWinner)) ?? dnatWinner;
          return {
            ...path,
            verdict: 'shadowed',
            answeredBy: dnatWinner,
            note: `connected, but sandbox ${name}'s DNAT rule comes first in CNI-HOSTPORT-DNAT`,
          };
        }
        return {
          ...path,
          verdict: 'reachable',
          answeredBy: p.expect,
          note: 'connected to the listener already in the pod (not identified by a nonce)',
        };
      }
      return {
        ...path,
        verdict: 'shadowed',
        note: `connected, but not to this probe's responder${outcome.banner ? ` (answer: ${JSON.stringify(outcome.banner.slice(0, 80))})` : ''}`,
      };
    }
  }
}

async function notApplicableReason(ctx: EngineContext, rec: SandboxRecord): Promise<string | undefined> {
  if (isHostNetwork(rec.config)) return 'host network: the sandbox has no network namespace of its own';
  if (rec.state !== 'Ready')
    return `sandbox is ${rec.state === 'NotReady' ? 'NOTREADY (its pause process is gone)' : 'not ready'}: nothing is measured`;
  if (!rec.netnsPath || rec.netnsClosed || (await ctx.netns.isClosed(rec.netnsPath))) return 'stopped: its network namespace was removed';
  return undefined;
}

/** createdAtNs is a decimal string: padded, it compares as text (and an odd one cannot throw, as BigInt would) */
function newestFirst(a: SandboxRecord, b: SandboxRecord): number {
  const [x, y] = [a.createdAtNs.padStart(24, '0'), b.createdAtNs.padStart(24, '0')];
  return x === y ? a.id.localeCompare(b.id) : x > y ? -1 : 1;
}

async function readyOthers(ctx: EngineContext, rec: SandboxRecord): Promise<SandboxRecord[]> {
  const out: SandboxRecord[] = [];
  for (const o of ctx.store.all()) {
    if (o.id === rec.id || isHostNetwork(o.config)) continue;
    await refreshLiveness(ctx, o);
    if (o.state === 'Ready' && o.netnsPath && !o.netnsClosed) out.push(o);
  }
  return out;
}

function eth0Network(rec: SandboxRecord): string | undefined {
  return rec.network?.networks.find((n) => n.ifName === 'eth0')?.network;
}

/** The paths a probe would measure, before measuring (for stopped/NOTREADY/host-network sandboxes). */
function plannedPaths(rec: SandboxRecord): Array<Omit<ProbePath, 'verdict' | 'measured' | 'note'>> {
  const out: Array<Omit<ProbePath, 'verdict' | 'measured' | 'note'>> = [];
  for (const [index, m] of rec.config.port_mappings.entries()) {
    const proto = protocolName(m.protocol).toLowerCase();
    if (m.host_port > 0)
      out.push({ kind: 'hostPort', from: 'host', to: fmt(m.host_ip || '127.0.0.1', m.host_port), proto, mappingIndex: index });
    else out.push({ kind: 'podPort', from: 'host', to: fmt(rec.ip || 'pod', m.container_port), proto, mappingIndex: index });
  }
  if (!isHostNetwork(rec.config)) out.push({ kind: 'gateway', from: 'pod', to: 'gateway', proto: 'tcp' });
  return out;
}

const podName = (rec: SandboxRecord | undefined) => (rec ? `${rec.config.metadata.namespace}/${rec.config.metadata.name}` : undefined);
