/**
 * The path MTU audit of the paths between nodes (docs/semantics.md#path-mtu): per path, DF echoes from the sender's
 * netns (a pod's, or a node's own) to the destination pod's address, bisected by findPathMtu against the MTU of the
 * sender's device toward it, run beside the connects. A path found narrower than that device names its narrowest
 * link read from every netns it crosses, in path order: the sending pod's device, its veth peer and bridge on its node,
 * that node's device toward the destination, the host's veth and bridge joining the nodes (when the nodes are netns of
 * this host, as kind's are), the receiving node's device the packets arrive by, its bridge toward the pod, the pod's
 * veth peer and the pod's own device; and every route with an `mtu` attribute the sender or either node uses. Each link
 * names its node, its netns, its name and its MTU.
 *
 * Why beyond the single-host finder (mtu.ts): a veth drops a received frame larger than its own MTU without an ICMP,
 * so a node whose link was set below its pods' MTU is a black hole for every pod of another node sending to it, and
 * the link that does it is in that node's netns, not on the sender's.
 */
import type { NarrowLink, PathMtu } from '../../../shared/domain/probe';
import type { KernelLink, KernelRoute } from '../kernel/types';
import type { ProbeNet } from '../netns/probe-net';
import { bestRoute, findPathMtu, MTU_ECHO_TIMEOUT_MS, type NetnsLinks } from './mtu';
import type { ProbeSession } from './session';

/** one network namespace a path crosses */
export interface MtuHop {
  /** the session's agent key for a sender; unique per netns */
  key: string;
  /** undefined: this host's own netns */
  netnsPath?: string;
  /** "pod web", "node kind-worker", "host" */
  label: string;
  /** the node it belongs to ("host" for this host's own netns) */
  node: string;
}

/** a path between nodes as the audit sees it */
export interface AcrossMtuPath {
  /** the sender's netns, and its node's when the sender is a pod (a node sending has none) */
  from: { ns: MtuHop; node?: MtuHop };
  to: { ns: MtuHop; node?: MtuHop };
  /** the address echoed (the receiving pod's; a host port's path is echoed to the pod its DNAT sends to) */
  dst: string;
  /** the sender's address: the receiving side's route back names the device the packets arrive by */
  src: string;
}

export const HOST_HOP: MtuHop = { key: 'host', label: 'host', node: 'host' };

const byName = (ns: NetnsLinks | undefined, name: string | undefined) => (ns && name ? ns.links.find((l) => l.name === name) : undefined);

/** the sender's device toward dst and its MTU (the size the sender allows itself) */
export function senderDevice(ns: NetnsLinks, dst: string): { route?: KernelRoute; link?: KernelLink } {
  const route = bestRoute(ns.routes, dst);
  return { route, link: byName(ns, route?.dev) };
}

/**
 * The narrowest link along a path between nodes, in path order (the first of the smallest is named, as a bridge
 * takes the smallest MTU of its ports and so comes after the port that made it small). `states` holds the links and
 * routes of every netns the path crosses, by MtuHop key ('host' for this host's). Undefined when nothing read is
 * narrower than `interfaceMtu`.
 */
export function narrowestAcross(p: AcrossMtuPath, states: ReadonlyMap<string, NetnsLinks>, interfaceMtu: number): NarrowLink | undefined {
  const out: NarrowLink[] = [];
  const add = (hop: MtuHop, l: KernelLink | undefined) => {
    if (l?.mtu !== undefined && !out.some((o) => o.node === hop.node && o.netns === hop.label && o.interface === l.name))
      out.push({ node: hop.node, netns: hop.label, interface: l.name, mtu: l.mtu });
  };
  const route = (hop: MtuHop, dst: string) => {
    const ns = states.get(hop.key);
    const r = ns ? bestRoute(ns.routes, dst) : undefined;
    if (r?.mtu !== undefined)
      out.push({ node: hop.node, netns: hop.label, interface: `route to ${r.dst}${r.dev ? ` dev ${r.dev}` : ''}`, mtu: r.mtu });
    return byName(ns, r?.dev);
  };
  // a veth's other end lives in the parent netns, named there by its ifindex
  const peerIn = (parent: MtuHop, l: KernelLink | undefined) =>
    l?.peerIfindex !== undefined && l.peerNetnsId !== undefined
      ? states.get(parent.key)?.links.find((x) => x.ifindex === l.peerIfindex)
      : undefined;
  const masterIn = (hop: MtuHop, l: KernelLink | undefined) => byName(states.get(hop.key), l?.master);
  const quiet = (hop: MtuHop, dst: string) => byName(states.get(hop.key), bestRoute(states.get(hop.key)?.routes ?? [], dst)?.dev);

  const fromNode = p.from.node ?? p.from.ns;
  const toNode = p.to.node ?? p.to.ns;
  if (p.from.node) {
    const own = route(p.from.ns, p.dst);
    add(p.from.ns, own);
    const peer = peerIn(p.from.node, own);
    add(p.from.node, peer);
    add(p.from.node, masterIn(p.from.node, peer));
  }
  const out1 = route(fromNode, p.dst);
  add(fromNode, out1);
  if (toNode.key !== fromNode.key) {
    // nodes that are netns of this host meet on its bridge, through a veth each
    if (fromNode.netnsPath !== undefined) {
      const hp = peerIn(HOST_HOP, out1);
      add(HOST_HOP, hp);
      add(HOST_HOP, masterIn(HOST_HOP, hp));
    }
    // the receiving node's device the packets arrive by: the one it sends the answers back over
    const in1 = quiet(toNode, p.src);
    if (toNode.netnsPath !== undefined) {
      const hp = peerIn(HOST_HOP, in1);
      add(HOST_HOP, masterIn(HOST_HOP, hp));
      add(HOST_HOP, hp);
    }
    add(toNode, in1);
  }
  if (p.to.node) {
    add(toNode, route(toNode, p.dst));
    const own = quiet(p.to.ns, p.src);
    const peer = peerIn(toNode, own);
    add(toNode, masterIn(toNode, peer));
    add(toNode, peer);
    add(p.to.ns, own);
  }
  let best: NarrowLink | undefined;
  for (const c of out) if (c.mtu < interfaceMtu && (!best || c.mtu < best.mtu)) best = c;
  return best;
}

/**
 * The audit of every path it applies to, by index into `paths`; undefined when this engine's probe cannot read the
 * kernel (then nothing is claimed). The agents of the senders are already open in `session`.
 */
export async function auditAcross(input: {
  net: ProbeNet;
  session: ProbeSession;
  paths: AcrossMtuPath[];
}): Promise<{ byIndex: Map<number, PathMtu>; errors: string[] } | undefined> {
  const netnsLinks = input.net.netnsLinks?.bind(input.net);
  if (!netnsLinks) return undefined;
  const errors: string[] = [];
  const reads = new Map<string, Promise<NetnsLinks | undefined>>();
  const read = (hop: MtuHop) => {
    let r = reads.get(hop.key);
    if (!r) {
      // no signal: each read is one short `ip` run, and the probe's signal already has a listener per agent
      r = netnsLinks(hop.netnsPath, undefined, { routes: true }).then(
        (s) => ({ label: hop.label, ...s }),
        (e: unknown) => {
          errors.push(
            `path MTU: cannot read the links of ${hop.label}${hop.node !== 'host' ? ` on ${hop.node}` : ''}: ${(e as Error).message}`,
          );
          return undefined;
        },
      );
      reads.set(hop.key, r);
    }
    return r;
  };
  const audits = new Map<string, Promise<Omit<PathMtu, 'at'>>>();
  const found = await Promise.all(
    input.paths.map(async (p) => {
      const ns = await read(p.from.ns);
      const interfaceMtu = ns && senderDevice(ns, p.dst).link?.mtu;
      const agent = input.session.agent(p.from.ns.key);
      if (interfaceMtu === undefined || !agent.ping) return undefined;
      const key = `${p.from.ns.key}|${p.dst}`;
      let audit = audits.get(key);
      if (!audit) {
        audit = findPathMtu((size) => agent.ping!(p.dst, size, MTU_ECHO_TIMEOUT_MS), { interfaceMtu, family: p.dst.includes(':') ? 6 : 4 });
        audits.set(key, audit);
      }
      return { interfaceMtu, mtu: await audit };
    }),
  );
  const byIndex = new Map<number, PathMtu>();
  await Promise.all(
    found.map(async (f, i) => {
      if (!f) return;
      const p = input.paths[i]!;
      const mtu: PathMtu = { ...f.mtu };
      const narrow = f.mtu.pathMtu !== undefined && (f.mtu.blackHole || f.mtu.pathMtu < f.interfaceMtu);
      if (narrow) {
        // only a narrow path's netns are read beyond the sender's
        const hops = [p.from.ns, p.from.node, HOST_HOP, p.to.node, p.to.ns].filter((h): h is MtuHop => h !== undefined);
        const states = new Map<string, NetnsLinks>();
        for (const h of hops) {
          const s = await read(h);
          if (s) states.set(h.key, s);
        }
        const at = narrowestAcross(p, states, f.interfaceMtu);
        if (at) mtu.at = at;
      }
      if (mtu.blackHole && !mtu.at) mtu.note += '; no link or route read along the path is narrower: the drop is beyond what was read';
      byIndex.set(i, mtu);
    }),
  );
  return { byIndex, errors };
}
