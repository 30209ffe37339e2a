/**
 * The narrow links of the last probe, placed on the topology: each path whose MTU audit found it narrower than the pod's
 * interface names its narrowest link (`mtu.at`: node, netns, interface, MTU), and that link is marked in the drawing with
 * its MTU and why — a black hole (full-size packets vanish there without an ICMP "fragmentation needed": the path
 * fails) or a smaller MTU that PMTU discovery reports (shown, not failed). A link the drawing has no box for (a route
 * with an mtu, a peer's interface, another node's) is listed beside it instead, so nothing the probe found is lost.
 */
import type { NarrowLink, ProbePath, ProbeReport } from '../../../../../../shared/domain/probe';
import type { TopologyNode } from '../../../../../../shared/domain/topology';
import { KIND_LABEL } from './reachability';

export interface NarrowMark {
  link: NarrowLink;
  /** a path through it lost full-size packets without ICMP: the worst of its paths decides the colour */
  blackHole: boolean;
  /** the path MTU the audit found (the smallest over its paths) and the pod interface's MTU */
  pathMtu?: number;
  interfaceMtu: number;
  /** the paths whose narrowest link it is, "gateway pod → 10.88.0.1:9" */
  paths: string[];
  /** one sentence: what happens to the pod's packets there */
  why: string;
  /** the topology node it is drawn on; absent when the drawing has none */
  nodeId?: string;
}

const linkKey = (l: NarrowLink) => `${l.node}\u0000${l.netns}\u0000${l.interface}`;

function pathLabel(p: ProbePath): string {
  return `${KIND_LABEL[p.kind]} ${p.from} → ${p.to}`;
}

/** the drawing's node for a narrow link: a host link by name in the host's netns, the pod's own by name in its netns */
function nodeFor(l: NarrowLink, nodes: TopologyNode[], sandboxId: string): string | undefined {
  if (l.node !== 'host') return undefined;
  if (l.netns === 'host') return nodes.find((n) => n.netns === 'host' && n.kind !== 'host' && n.name === l.interface)?.id;
  if (l.netns === 'pod') return nodes.find((n) => n.sandboxId === sandboxId && n.netns !== 'host' && n.name === l.interface)?.id;
  return undefined;
}

function whyOf(m: Omit<NarrowMark, 'why' | 'nodeId'>): string {
  if (m.blackHole)
    return `MTU black hole: the pod's interface allows ${m.interfaceMtu} bytes, and packets over ${m.link.mtu} vanish here without an ICMP "fragmentation needed" (the path fails)`;
  return `path MTU ${m.pathMtu ?? m.link.mtu} < the pod's ${m.interfaceMtu}: PMTU discovery reports it, so senders shrink their packets (shown, not a failure)`;
}

/** Every narrow link of `report` (only while it is a measurement of this pod), each once, black holes first. */
export function narrowLinkMarks(report: ProbeReport | null | undefined, nodes: TopologyNode[], sandboxId: string): NarrowMark[] {
  if (!report || report.sandboxId !== sandboxId) return [];
  const byLink = new Map<string, Omit<NarrowMark, 'why' | 'nodeId'>>();
  for (const p of report.paths) {
    const m = p.mtu;
    if (!p.measured || !m?.at) continue;
    const k = linkKey(m.at);
    const cur = byLink.get(k);
    if (!cur) {
      byLink.set(k, {
        link: m.at,
        blackHole: m.blackHole,
        ...(m.pathMtu !== undefined ? { pathMtu: m.pathMtu } : {}),
        interfaceMtu: m.interfaceMtu,
        paths: [pathLabel(p)],
      });
      continue;
    }
    cur.blackHole ||= m.blackHole;
    if (m.pathMtu !== undefined && (cur.pathMtu === undefined || m.pathMtu < cur.pathMtu)) cur.pathMtu = m.pathMtu;
    if (!cur.paths.includes(pathLabel(p))) cur.paths.push(pathLabel(p));
  }
  return [...byLink.values()]
    .map((m) => {
      const nodeId = nodeFor(m.link, nodes, sandboxId);
      return { ...m, why: whyOf(m), ...(nodeId ? { nodeId } : {}) };
    })
    .sort((a, b) => Number(b.blackHole) - Number(a.blackHole));
}

/** where a narrow link is, in words: "host veth1a2b", "pod eth0", "route to 10.0.0.0/8 (host) on kind-worker" */
export function narrowLinkPlace(l: NarrowLink): string {
  const where = l.netns === 'host' ? 'host' : l.netns;
  const on = l.node !== 'host' ? ` on ${l.node}` : '';
  return l.interface.startsWith('route to') ? `${l.interface} (${where})${on}` : `${where} ${l.interface}${on}`;
}
