/**
 * Which namespaces a planned probe connect crosses and which route decisions explain it, per path kind:
 *  - hostPort/podPort: the host (its route to the address, then to the pod after DNAT) → the pod (its route back);
 *  - gateway, dns: the pod (its route to the gateway or nameserver) → the host (its route back to the pod);
 *  - peer, peerPort: the sender pod → the host (bridge) → the receiving pod (its route back).
 */
import type { PodFacts } from '../common/pod-facts';
import type { FlowNetns, FlowToTrace, ProbeNode } from './deps';
import { familyOf, type PlannedConnect } from './plan';

export interface FlowContext {
  rec: PodFacts;
  others: PodFacts[];
  podIps: string[];
  gateways: string[];
  eth0Ips(r: PodFacts): string[];
  /** the pods' node when it is not this host: "host" is its netns */
  node?: ProbeNode;
}

/** the netns playing the host's part: this host's, or the pods' node's */
export function hostRef(node: ProbeNode | undefined): FlowNetns {
  return node ? { key: 'host', path: node.netnsPath, label: `node ${node.name}`, node: node.name } : { key: 'host', label: 'the host' };
}

export function netnsRef(key: string, ctx: FlowContext): FlowNetns {
  const host = hostRef(ctx.node);
  if (key === 'host') return host;
  const onNode = ctx.node ? { node: ctx.node.name, parent: { key: host.key, path: host.path, label: host.label } } : {};
  if (key === ctx.rec.id) return { key, path: ctx.rec.netnsPath, label: "the pod's netns", ...onNode };
  const o = ctx.others.find((x) => x.id === key);
  return { key, path: o?.netnsPath, label: `peer ${o?.config.metadata.name ?? key.slice(0, 12)}'s netns`, ...onNode };
}

export function flowSpecFor(p: PlannedConnect, ctx: FlowContext, sport: number): FlowToTrace {
  const family = familyOf(p.host);
  const from = netnsRef(p.fromAgent, ctx);
  const to = netnsRef(p.expect, ctx);
  const host = netnsRef('host', ctx);
  const ipOf = (r: PodFacts | undefined) => (r ? ctx.eth0Ips(r).find((ip) => familyOf(ip) === family) : undefined);
  const gw = ctx.gateways.find((g) => familyOf(g) === family);
  const base = { sport, family, dst: p.host, dport: p.port, ...(p.dns ? { proto: 'udp' as const } : {}) };
  const out: FlowToTrace['routes'] = [{ netns: from, query: { dst: p.host, sport, dport: p.port }, purpose: `route to ${p.host}` }];
  switch (p.path.kind) {
    case 'hostPort':
    case 'podPort': {
      const podIp = ipOf(ctx.rec);
      if (p.path.kind === 'hostPort' && podIp)
        out.push({ netns: host, query: { dst: podIp }, purpose: `route to the pod ${podIp} (after DNAT)` });
      if (podIp && gw) out.push({ netns: to, query: { dst: gw, from: podIp }, purpose: `route back to ${gw}`, reply: true });
      return { ...base, netns: [host, to], routes: out };
    }
    case 'dns':
    case 'gateway': {
      const podIp = ipOf(ctx.rec);
      if (podIp) out.push({ netns: host, query: { dst: podIp, from: p.host }, purpose: `route back to the pod ${podIp}`, reply: true });
      return { ...base, netns: [from, host], routes: out };
    }
    case 'peer':
    case 'peerPort': {
      const src = ipOf(p.fromAgent === ctx.rec.id ? ctx.rec : ctx.others.find((o) => o.id === p.fromAgent));
      if (src) out.push({ netns: to, query: { dst: src, from: p.host }, purpose: `route back to ${src}`, reply: true });
      return { ...base, netns: [from, host, to], routes: out };
    }
  }
}
