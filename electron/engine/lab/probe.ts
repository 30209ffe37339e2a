/**
 * The lab's optional probe step, measured with the engine's probe agents (../probe/types.ts): after ADD (and CHECK),
 * from the host into the throwaway netns. Paths:
 *  - podPort: host → each address the ADD result put in the netns, on each TCP mapping's container port (or, with no
 *    mapping, on a port the responder picks), answered by a responder inside the netns;
 *  - hostPort: host → each TCP mapping's host port on 127.0.0.1 (IPv4 only) and on the gateway addresses, through
 *    portmap's DNAT, answered by the same responder. A mapping with a hostIP is connected to on that address only
 *    when it is one of the host's own (traffic never leaves the host).
 * A connection counts as reachable only when the answer carries this run's nonce; one that lands elsewhere is
 * "shadowed". Non-TCP mappings are listed as not measured. Every agent is ended (by pid) before this returns.
 */
import { randomBytes } from 'node:crypto';
import type { CniResult } from '../../../shared/domain/cni';
import type { LabCapabilities, LabProbe } from '../../../shared/domain/lab';
import { PROBE_MEASURED_BY, type ProbePath } from '../../../shared/domain/probe';
import type { ConnectOutcome, ProbeAgent, ProbeNet } from '../netns/probe-net';
import { unreachableNote } from '../netns/probe-net';

export interface LabProbeTarget {
  netns: string;
  result?: CniResult;
  portMappings?: LabCapabilities['portMappings'];
}

export interface LabProbeOptions {
  connectTimeoutMs?: number;
  bannerMs?: number;
  signal?: AbortSignal;
}

const BANNER = 'PODSCOPE-PROBE';
const fmt = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
const familyOf = (ip: string): 4 | 6 => (ip.includes(':') ? 6 : 4);

/** the netns's addresses (interfaces with a sandbox path, or all when the result names none) and the gateways */
export function probeAddresses(result: CniResult | undefined): { podIps: string[]; gateways: string[] } {
  const ifaces = result?.interfaces ?? [];
  const ips = result?.ips ?? [];
  const inNetns = (i: number | undefined) => i === undefined || ifaces[i] === undefined || Boolean(ifaces[i]!.sandbox);
  const podIps = [...new Set(ips.filter((ip) => inNetns(ip.interface)).map((ip) => ip.address.split('/')[0]!))];
  const gateways = [...new Set(ips.flatMap((ip) => (ip.gateway ? [ip.gateway] : [])))];
  return { podIps, gateways };
}

type Mapping = NonNullable<LabCapabilities['portMappings']>[number];

/** one connect to make, and the path it is reported as */
interface Plan {
  path: ProbePath;
  host: string;
  port: number;
  existing: boolean;
}

/** the responders inside the netns, one per container port */
class Responders {
  /** container port → true when something already listened there (connected to as it is, no banner) */
  readonly ports = new Map<number, boolean>();
  constructor(
    private readonly pod: ProbeAgent,
    private readonly listening: Set<number>,
    private readonly banner: string,
  ) {}

  /** a listener on this port (0: any free port), the run's responder unless one was already there */
  async ensure(port: number): Promise<number> {
    if (port === 0) {
      const p = await this.pod.respond(0, this.banner);
      this.ports.set(p, false);
      return p;
    }
    if (!this.ports.has(port)) {
      const existing = this.listening.has(port);
      if (!existing) await this.pod.respond(port, this.banner);
      this.ports.set(port, existing);
    }
    return port;
  }
}

function notProbed(m: Mapping, index: number, to: string, note: string): ProbePath {
  return { kind: 'hostPort', from: 'host', to, proto: m.protocol, mappingIndex: index, verdict: 'notApplicable', measured: false, note };
}

/** host → the netns's own addresses, on each TCP mapping's container port (or a port the responder picks) */
async function podPortPlans(r: Responders, tcp: Array<{ m: Mapping; index: number }>, podIps: string[]): Promise<Plan[]> {
  const plans: Plan[] = [];
  const podPorts = tcp.length > 0 ? tcp.map(({ m, index }) => ({ port: m.containerPort, index })) : [{ port: 0, index: undefined }];
  for (const pp of podPorts) {
    const port = await r.ensure(pp.port);
    for (const ip of podIps) {
      const path: ProbePath = {
        kind: 'podPort',
        from: 'host',
        to: fmt(ip, port),
        proto: 'tcp',
        verdict: 'timeout',
        measured: false,
        note: '',
      };
      path.family = familyOf(ip);
      if (pp.index !== undefined) path.mappingIndex = pp.index;
      plans.push({ path, host: ip, port, existing: r.ports.get(port) ?? false });
    }
  }
  return plans;
}

/** host → each TCP mapping's host port, through portmap's DNAT; a hostIP not of this host is reported, not probed */
async function hostPortPlans(
  r: Responders,
  tcp: Array<{ m: Mapping; index: number }>,
  addrs: { podIps: string[]; gateways: string[]; host: Set<string> },
  report: LabProbe,
): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const { m, index } of tcp) {
    await r.ensure(m.containerPort);
    const targets: string[] = [];
    if (m.hostIP) {
      if (addrs.host.has(m.hostIP)) targets.push(m.hostIP);
      else
        report.paths.push(
          notProbed(
            m,
            index,
            fmt(m.hostIP, m.hostPort),
            `hostIP ${m.hostIP} is not an address of this host: not probed (traffic never leaves the host)`,
          ),
        );
    } else {
      if (addrs.podIps.some((ip) => familyOf(ip) === 4)) targets.push('127.0.0.1');
      for (const gw of addrs.gateways) if (addrs.podIps.some((ip) => familyOf(ip) === familyOf(gw))) targets.push(gw);
    }
    for (const ip of targets) {
      const path: ProbePath = {
        kind: 'hostPort',
        from: 'host',
        to: fmt(ip, m.hostPort),
        proto: 'tcp',
        mappingIndex: index,
        family: familyOf(ip),
        verdict: 'timeout',
        measured: false,
        note: '',
      };
      plans.push({ path, host: ip, port: m.hostPort, existing: r.ports.get(m.containerPort) ?? false });
    }
  }
  return plans;
}

/** opens the agents, plans every path, connects them all at once and judges each answer */
async function measure(
  net: ProbeNet,
  target: LabProbeTarget,
  opts: LabProbeOptions,
  report: LabProbe,
  agents: ProbeAgent[],
): Promise<void> {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 1500;
  const bannerMs = opts.bannerMs ?? 400;
  const nonce = randomBytes(8).toString('hex');
  const { podIps, gateways } = probeAddresses(target.result);
  const mappings = target.portMappings ?? [];
  if (podIps.length === 0) {
    report.errors.push('the ADD result has no address inside the netns: nothing to connect to');
    return;
  }
  const [host, pod] = await Promise.all([net.open(undefined, opts.signal), net.open(target.netns, opts.signal)]);
  agents.push(host, pod);
  const responders = new Responders(pod, new Set(await pod.listeners()), `${BANNER} ${nonce} lab\n`);
  const tcp = mappings.map((m, index) => ({ m, index })).filter(({ m }) => m.protocol === 'tcp');
  for (const [index, m] of mappings.entries())
    if (m.protocol !== 'tcp')
      report.paths.push(notProbed(m, index, fmt(m.hostIP || '127.0.0.1', m.hostPort), `only TCP is measured; ${m.protocol} not probed`));
  const plans = [
    ...(await podPortPlans(responders, tcp, podIps)),
    ...(await hostPortPlans(responders, tcp, { podIps, gateways, host: new Set(net.hostAddresses()) }, report)),
  ];
  const outcomes = await Promise.all(
    plans.map((p) => host.connect(p.host, p.port, connectTimeoutMs, p.existing ? bannerMs : connectTimeoutMs)),
  );
  plans.forEach((p, i) => report.paths.push(judge(p.path, outcomes[i]!, nonce, p.existing)));
}

export async function probeLabNetns(net: ProbeNet, target: LabProbeTarget, opts: LabProbeOptions = {}): Promise<LabProbe> {
  const t0 = performance.now();
  const report: LabProbe = {
    measuredAt: new Date().toISOString(),
    measuredBy: PROBE_MEASURED_BY,
    durationMs: 0,
    paths: [],
    errors: [],
    ok: false,
  };
  const agents: ProbeAgent[] = [];
  try {
    await measure(net, target, opts, report, agents);
  } catch (e) {
    if (opts.signal?.aborted) report.errors.push('probe canceled');
    else report.errors.push((e as Error).message);
  } finally {
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
    report.durationMs = performance.now() - t0;
  }
  const applicable = report.paths.filter((p) => p.verdict !== 'notApplicable');
  report.ok = report.errors.length === 0 && applicable.length > 0 && applicable.every((p) => p.measured && p.verdict === 'reachable');
  return report;
}

function judge(path: ProbePath, outcome: ConnectOutcome, nonce: string, existing: boolean): ProbePath {
  const p: ProbePath = { ...path, measured: true, listener: existing ? 'existing' : 'responder' };
  switch (outcome.kind) {
    case 'refused':
      return { ...p, verdict: 'refused', note: 'connection refused (RST)' };
    case 'timeout':
      return { ...p, verdict: 'timeout', note: 'no answer to the SYN in time' };
    case 'unreachable':
      return { ...p, verdict: 'unreachable', note: unreachableNote(outcome.error) };
    case 'error':
      return { ...p, verdict: 'timeout', note: `not connected: ${outcome.error}` };
    case 'connected': {
      p.rttMs = Math.round(outcome.rttMs * 1000) / 1000;
      const m = outcome.banner ? new RegExp(`^${BANNER} ([0-9a-f]+) (\\S+)$`).exec(outcome.banner.trim()) : null;
      if (m && m[1] === nonce) return { ...p, verdict: 'reachable', note: "the run's responder answered (nonce matched)" };
      if (existing)
        return { ...p, verdict: 'reachable', note: 'connected to the listener already in the netns (not identified by a nonce)' };
      return {
        ...p,
        verdict: 'shadowed',
        note: `connected, but not to this run's responder${outcome.banner ? ` (answer: ${JSON.stringify(outcome.banner.slice(0, 80))})` : ''}`,
      };
    }
  }
}
