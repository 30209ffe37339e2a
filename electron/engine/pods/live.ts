/**
 * The kernel's view of a sandbox's network, checked against what was asked for: are the CNI result's addresses
 * really there, did the bandwidth annotations become tbf qdiscs at those rates, does every host port have its DNAT.
 */
import { analyzeBandwidth, formatBitsPerSecond } from '../../../shared/domain/bandwidth';
import { isHostNetwork, protocolName } from '../../../shared/domain/config';
import { PodscopeError } from '../../../shared/domain/errors';
import type { LiveBandwidthCheck, LiveNetworkView, LivePortCheck, LiveQdisc } from '../../../shared/domain/live';
import type { RawLiveNetwork } from '../netns/live-reader';
import type { PodsContext } from './context';
import { effectCalls, effectQuery, pluginEffects } from './plugin-effects';
import type { PodFacts } from '../common/pod-facts';

export async function liveNetwork(ctx: PodsContext, idOrPrefix: string): Promise<LiveNetworkView> {
  const rec = ctx.store.pods.get(idOrPrefix);
  if (isHostNetwork(rec.config)) {
    throw new PodscopeError(
      'FailedPrecondition',
      `sandbox ${rec.id} uses the host network: it has no network namespace of its own to look into`,
    );
  }
  if (!rec.netnsPath || rec.netnsClosed || (await ctx.netns.isClosed(rec.netnsPath))) {
    throw new PodscopeError(
      'FailedPrecondition',
      `sandbox ${rec.id} is stopped: its network namespace ${rec.netnsPath ?? ''} was removed`.trimEnd(),
    );
  }
  const hostDevices = [
    ...new Set((rec.network?.networks ?? []).flatMap((n) => (n.result?.interfaces ?? []).filter((i) => !i.sandbox).map((i) => i.name))),
  ];
  const extra = effectQuery(effectCalls(rec.trace ?? [], rec.network?.networks ?? []));
  return buildLiveView(rec, await ctx.liveReader.read(rec.netnsPath, hostDevices, undefined, extra), new Date());
}

export function buildLiveView(rec: PodFacts, raw: RawLiveNetwork, now: Date): LiveNetworkView {
  const qdiscs: LiveQdisc[] = Object.entries(raw.qdiscs).flatMap(([dev, list]) => {
    const kind = raw.hostLinkKinds[dev];
    // the bandwidth plugin shapes ingress on the host end of the pod's veth and egress on an ifb it creates
    const role = kind === 'ifb' ? 'ifb' : kind === 'veth' ? 'host-veth' : undefined;
    if (!role) return [];
    return list.map((q) => ({
      dev,
      role,
      kind: q.kind,
      rateBitsPerSecond: q.rate === undefined ? undefined : q.rate * 8,
      burstBytes: q.burst,
    }));
  });
  return {
    collectedAt: now.toISOString(),
    netnsPath: rec.netnsPath ?? '',
    interfaces: raw.interfaces,
    routes: raw.routes,
    qdiscs,
    bandwidth: checkBandwidth(rec, qdiscs),
    ports: checkPorts(rec, raw.nat),
    ...effectsOf(rec, raw),
    errors: raw.errors,
  };
}

/** firewall's, tuning's, sbr's and host-device's effects, when the pod ran any of them */
function effectsOf(rec: PodFacts, raw: RawLiveNetwork): { pluginEffects?: LiveNetworkView['pluginEffects'] } {
  const calls = effectCalls(rec.trace ?? [], rec.network?.networks ?? []);
  return calls.length ? { pluginEffects: pluginEffects(calls, raw) } : {};
}

function checkBandwidth(rec: PodFacts, qdiscs: LiveQdisc[]): LiveBandwidthCheck[] {
  const bw = analyzeBandwidth(rec.config.annotations);
  return (['ingress', 'egress'] as const).map((direction) => {
    const role = direction === 'ingress' ? 'host-veth' : 'ifb';
    const where = direction === 'ingress' ? "the host end of the pod's veth" : "the pod's ifb device";
    const requested = bw[direction]?.bitsPerSecond !== undefined ? Number(bw[direction]!.bitsPerSecond) : undefined;
    const tbf = qdiscs.find((q) => q.role === role && q.kind === 'tbf');
    const applied = tbf?.rateBitsPerSecond;
    const human = (b: number) => formatBitsPerSecond(BigInt(Math.round(b)));
    const check: LiveBandwidthCheck = {
      direction,
      requestedBitsPerSecond: requested,
      appliedBitsPerSecond: applied,
      device: tbf?.dev,
      matches: false,
      note: '',
    };
    if (requested !== undefined && applied !== undefined) {
      // tc stores rates in bytes per second, so a rate that is not a multiple of 8 bits comes back rounded
      check.matches = Math.abs(applied - requested) <= Math.max(8, requested * 0.01);
      check.note = check.matches
        ? `tbf at ${human(applied)} on ${tbf!.dev}, as annotated`
        : `tbf at ${human(applied)} on ${tbf!.dev}, but the annotation asks for ${human(requested)}`;
    } else if (requested !== undefined) {
      check.note = `no tbf qdisc on ${where}: the annotation did not take effect (is the bandwidth plugin in the conflist, with capabilities.bandwidth?)`;
    } else if (applied !== undefined) {
      check.note = `shaped at ${human(applied)} on ${tbf!.dev} although no annotation asks for it (static limits in the conflist?)`;
    } else {
      check.matches = true;
      check.note = 'not shaped, and no annotation asks for it';
    }
    return check;
  });
}

function checkPorts(rec: PodFacts, nat: RawLiveNetwork['nat']): LivePortCheck[] {
  const rules = [...nat.v4, ...nat.v6];
  // portmap tags the jump into each pod's CNI-DN chain with the container id; only those chains are the pod's
  const chains = new Set(
    rules
      .filter((l) => l.startsWith('-A CNI-HOSTPORT-DNAT ') && l.includes(`id: \\"${rec.id}\\"`))
      .flatMap((l) => /-j (CNI-DN-\S+)/.exec(l)?.[1] ?? []),
  );
  const podIps = rec.ipSelection?.eth0Ips ?? [];
  return rec.config.port_mappings.map((m, index) => {
    const protocol = protocolName(m.protocol).toLowerCase();
    const base = { index, protocol, hostPort: m.host_port, containerPort: m.container_port };
    if (m.host_port <= 0)
      return {
        ...base,
        found: false,
        rules: [],
        note: 'container-port-only: never passed to CNI, so no DNAT rule is expected; reach it on the pod IP',
      };
    // portmap writes one DNAT per pod IP of the mapping's family (iptables for IPv4, ip6tables for IPv6): a
    // dual-stack pod has one of each, and every one of them is the mapping's
    const found = rules.filter((l) => {
      const chain = /^-A (\S+) /.exec(l)?.[1];
      return (
        chain !== undefined &&
        chains.has(chain) &&
        l.includes('-j DNAT') &&
        l.includes(`-p ${protocol} `) &&
        l.includes(`--dport ${m.host_port} `) &&
        podIps.some((ip) => l.includes(`--to-destination ${ip.includes(':') ? `[${ip}]` : ip}:${m.container_port}`)) &&
        (m.host_ip === '' || l.includes(`-d ${m.host_ip}/`))
      );
    });
    const rule = found[0];
    return rule
      ? {
          ...base,
          found: true,
          rule,
          rules: found,
          note: `DNAT ${m.host_ip || '*'}:${m.host_port}/${protocol} → ${/--to-destination (\S+)/.exec(rule)?.[1] ?? '?'}`,
        }
      : {
          ...base,
          found: false,
          rules: [],
          note: 'no DNAT rule for this mapping in the nat table (is portmap in the conflist, with capabilities.portMappings?)',
        };
  });
}
