/**
 * The path MTU audit of a probe's planned paths, run beside the connects (so the probe takes about as long): per path,
 * echoes from the path's sender toward its destination (gateway and DNS paths: from the pod; peers: from whichever pod
 * sends; host and pod ports: from the host to the pod's address, since ICMP is not DNATed like the port), bisected by
 * findPathMtu; and the narrowest link along it read from the kernel. Paths that share a sender and a destination share
 * one audit. Paths the plugin's design forbids are not audited.
 */
import type { PathMtu } from '../../../shared/domain/probe';
import type { PodFacts } from '../common/pod-facts';
import type { ProbeNet } from '../netns/probe-net';
import type { ProbedAttachment } from './attachments';
import { findPathMtu, MTU_ECHO_TIMEOUT_MS, narrowestLink, type NetnsLinks, type PathEnd } from './mtu';
import { familyOf, type PlannedConnect } from './plan';
import type { AgentKey, ProbeSession } from './session';

interface Target {
  from: AgentKey;
  dst: string;
  family: 4 | 6;
  fromEnd?: { pod: string; ifName: string };
  toEnd?: { pod: string; ifName: string };
}

const ifNameOn = (r: PodFacts, network: string) => r.network?.networks.find((n) => n.network === network)?.ifName;

function targetOf(p: PlannedConnect, rec: PodFacts, pods: PodFacts[], att: ProbedAttachment): Target | undefined {
  const family = familyOf(p.host);
  switch (p.path.kind) {
    case 'gateway':
    case 'dns':
      return { from: rec.id, dst: p.host, family, fromEnd: { pod: rec.id, ifName: att.ifName } };
    // a declared port crosses the same links as the network path: one audit serves both (same sender and address)
    case 'peer':
    case 'peerPort': {
      const sender = pods.find((o) => o.id === p.fromAgent);
      const receiver = pods.find((o) => o.id === p.expect);
      const sIf = sender && ifNameOn(sender, att.network);
      const rIf = receiver && ifNameOn(receiver, att.network);
      if (!sIf || !rIf) return undefined;
      return { from: p.fromAgent, dst: p.host, family, fromEnd: { pod: sender.id, ifName: sIf }, toEnd: { pod: receiver.id, ifName: rIf } };
    }
    case 'hostPort':
    case 'podPort': {
      const ip = att.ips.find((a) => familyOf(a) === (p.path.family ?? family));
      return ip ? { from: 'host', dst: ip, family: familyOf(ip), toEnd: { pod: rec.id, ifName: att.ifName } } : undefined;
    }
  }
}

/** the audit of every planned connect it applies to, by index into `connects` */
export async function auditMtu(input: {
  net: ProbeNet;
  session: ProbeSession;
  rec: PodFacts;
  others: PodFacts[];
  attachments: ProbedAttachment[];
  connects: PlannedConnect[];
  signal?: AbortSignal;
}): Promise<{ byIndex: Map<number, PathMtu>; errors: string[] } | undefined> {
  const { net, session, rec, attachments } = input;
  const out = new Map<number, PathMtu>();
  const errors: string[] = [];
  const netnsLinks = net.netnsLinks?.bind(net);
  // an engine whose probe cannot read the kernel (a simulated network without links): no audit, and none claimed
  if (!netnsLinks) return undefined;
  const pods = [rec, ...input.others];
  const targets = input.connects.map((p) => {
    const att = attachments.find((a) => a.network === p.path.network && a.ifName === p.path.interface) ?? attachments[0];
    return p.forbidden || !att ? undefined : targetOf(p, rec, pods, att);
  });
  const labelOf = (k: string) =>
    k === 'host' ? 'host' : k === rec.id ? 'pod' : `peer ${pods.find((o) => o.id === k)?.config.metadata.name ?? k.slice(0, 12)}`;
  const read = async (k: string, routes: boolean): Promise<NetnsLinks | undefined> => {
    try {
      const path = k === 'host' ? undefined : pods.find((o) => o.id === k)?.netnsPath;
      return { label: labelOf(k), ...(await netnsLinks(path, input.signal, { routes })) };
    } catch (e) {
      errors.push(`path MTU: cannot read the links of ${labelOf(k)}: ${(e as Error).message}`);
      return undefined;
    }
  };
  // the common case needs only the pod's interface MTU: the links along the path are read only for a path found
  // narrower than the interface (one kernel read instead of one per netns, so the audit stays within the connects' time)
  const podLinks = await read(rec.id, false);
  if (!podLinks) return { byIndex: out, errors };
  const audits = new Map<string, Promise<Omit<PathMtu, 'at'>>>();
  const found = await Promise.all(
    targets.map(async (t, i) => {
      if (!t) return undefined;
      const att = attachments.find((a) => a.network === input.connects[i]!.path.network) ?? attachments[0]!;
      const interfaceMtu = podLinks.links.find((l) => l.name === att.ifName)?.mtu;
      const agent = session.agent(t.from);
      if (interfaceMtu === undefined || !agent.ping) return undefined;
      const key = `${t.from}|${t.dst}`;
      let audit = audits.get(key);
      if (!audit) {
        audit = findPathMtu((size) => agent.ping!(t.dst, size, MTU_ECHO_TIMEOUT_MS), { interfaceMtu, family: t.family });
        audits.set(key, audit);
      }
      return { t, interfaceMtu, mtu: await audit };
    }),
  );
  const narrow = found.filter((f) => f && f.mtu.pathMtu !== undefined && (f.mtu.blackHole || f.mtu.pathMtu < f.interfaceMtu));
  const states = new Map<string, NetnsLinks>();
  if (narrow.length > 0) {
    const keys = new Set<string>(['host', rec.id]);
    for (const f of narrow) for (const e of [f!.t.fromEnd, f!.t.toEnd]) if (e) keys.add(e.pod);
    await Promise.all(
      [...keys].map(async (k) => {
        const s = await read(k, true);
        if (s) states.set(k, s);
      }),
    );
  }
  const host = states.get('host');
  const endOf = (e: Target['fromEnd']): PathEnd | undefined => {
    const ns = e && states.get(e.pod);
    return e && ns ? { ns, ifName: e.ifName } : undefined;
  };
  found.forEach((f, i) => {
    if (!f) return;
    const mtu: PathMtu = { ...f.mtu };
    const at =
      host && narrow.includes(f)
        ? narrowestLink({ host, from: endOf(f.t.fromEnd), to: endOf(f.t.toEnd), dst: f.t.dst, interfaceMtu: f.interfaceMtu })
        : undefined;
    if (at) mtu.at = at;
    if (mtu.blackHole && !at) mtu.note += '; no link or route on this host is narrower: the drop is beyond it';
    out.set(i, mtu);
  });
  return { byIndex: out, errors };
}
