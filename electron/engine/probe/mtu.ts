/**
 * The path MTU audit (docs/semantics.md#path-mtu): for a measured path, the largest IP packet that crosses with DF
 * set, found with ICMP echoes of chosen sizes (iputils' `ping -M do`, from the path's sender netns), and the narrowest
 * link along the path read from the kernel. Two pure parts, tested on recorded states: the bisection (findPathMtu)
 * and the narrow-link finder (narrowestLink).
 *
 * Why an echo: the probe's TCP connect needs only small packets, so a path whose MTU is below the pod interface's
 * reads reachable while full-size packets vanish (a veth drops a received frame larger than its MTU with no ICMP).
 */
import { PATH_MTU_MIN, type NarrowLink, type PathMtu } from '../../../shared/domain/probe';
import type { KernelLink, KernelRoute } from '../kernel/types';
import type { PingOutcome } from '../netns/probe-net';

/** sizes tried at once per round of the bisection: 8 intervals a round, so 1500 → 576 takes 4 rounds */
export const MTU_FANOUT = 7;
/** how long one echo is waited for: the paths audited are on this host, where an answer takes well under 1 ms */
export const MTU_ECHO_TIMEOUT_MS = 300;

export type SendEcho = (size: number) => Promise<PingOutcome>;

/**
 * Bisects the path MTU between PATH_MTU_MIN and the interface MTU. One echo at the interface's MTU answers the common
 * case. "fragmentation needed" (or the sender's own route saying the size is too big) gives the MTU at once: it is
 * confirmed with one echo of that size (working PMTU discovery: shown, not failed). An echo that vanishes with no such
 * answer starts the bisection: an echo of the minimum first (none: ICMP echo does not cross, nothing is claimed), then
 * MTU_FANOUT sizes at once per round until the largest size that crossed is next to the smallest that did not.
 */
export async function findPathMtu(
  send: SendEcho,
  opts: { interfaceMtu: number; family: 4 | 6; fanout?: number },
): Promise<Omit<PathMtu, 'at'>> {
  const { interfaceMtu } = opts;
  const min = Math.min(PATH_MTU_MIN[opts.family], interfaceMtu);
  const fanout = Math.max(1, opts.fanout ?? MTU_FANOUT);
  let probes = 0;
  const echo = async (size: number) => {
    probes++;
    return send(size);
  };
  const base = { interfaceMtu };
  let hi = interfaceMtu;
  let said: { mtu: number; local?: boolean } | undefined;
  let r = await echo(interfaceMtu);
  // one echo lost is not yet a black hole (the first packet to a neighbour not yet resolved can be): once more
  if (r.kind === 'lost') r = await echo(interfaceMtu);
  // PMTU discovery: follow what the kernel or a hop says, a few times at most (each answer is smaller)
  for (let i = 0; i < 3 && r.kind === 'tooBig' && r.mtu < hi && r.mtu >= min; i++) {
    said = { mtu: r.mtu, local: r.local };
    hi = r.mtu;
    r = await echo(r.mtu);
    if (r.kind === 'ok')
      return {
        ...base,
        pathMtu: said.mtu,
        blackHole: false,
        pmtud: true,
        probes,
        note: said.local
          ? `the sender's route or link says ${said.mtu} (PMTU discovery works)`
          : `a hop answered "fragmentation needed" with MTU ${said.mtu} (PMTU discovery works)`,
      };
  }
  if (r.kind === 'ok') return { ...base, pathMtu: hi, blackHole: false, probes, note: `${hi}-byte packets cross` };
  if (r.kind === 'error') return { ...base, blackHole: false, probes, note: `not measured: ${r.error}` };
  const floor = await echo(min);
  if (floor.kind !== 'ok')
    return {
      ...base,
      blackHole: false,
      probes,
      note:
        floor.kind === 'error'
          ? `not measured: ${floor.error}`
          : `no echo answer even at ${min} bytes: ICMP echo does not cross this path, so its MTU is not known`,
    };
  let lo = min;
  // a size larger than `lo` that failed: silently (a black hole) or with "fragmentation needed"
  let silent = r.kind === 'lost';
  // a loss counts once confirmed: the smallest size that vanished is sent again (twice at most); if it crosses now,
  // the earlier loss was transient and the search goes on above it
  let confirmations = 2;
  for (;;) {
    while (hi - lo > 1) {
      const step = (hi - lo) / (fanout + 1);
      const sizes = [...new Set(Array.from({ length: fanout }, (_, i) => Math.round(lo + step * (i + 1))))].filter((s) => s > lo && s < hi);
      if (sizes.length === 0) break;
      const got = await Promise.all(sizes.map(async (s) => ({ s, o: await echo(s) })));
      const error = got.find((g) => g.o.kind === 'error');
      if (error?.o.kind === 'error') return { ...base, blackHole: false, probes, note: `not measured: ${error.o.error}` };
      const crossed = got.filter((g) => g.o.kind === 'ok').map((g) => g.s);
      if (crossed.length) lo = Math.max(lo, ...crossed);
      const failed = got.filter((g) => g.o.kind !== 'ok' && g.s > lo);
      if (failed.length) hi = Math.min(hi, ...failed.map((g) => g.s));
      for (const g of failed) if (g.o.kind === 'lost') silent = true;
      for (const g of got) if (g.o.kind === 'tooBig' && g.o.mtu >= lo) said = { mtu: g.o.mtu, local: g.o.local };
    }
    if (!silent || confirmations === 0 || lo >= interfaceMtu) break;
    confirmations--;
    if ((await echo(lo + 1)).kind !== 'ok') break;
    lo += 1;
    hi = interfaceMtu + 1;
    silent = false;
  }
  if (lo >= interfaceMtu)
    return { ...base, pathMtu: interfaceMtu, blackHole: false, probes, note: `${interfaceMtu}-byte packets cross (after a lost echo)` };
  if (!silent)
    return {
      ...base,
      pathMtu: lo,
      blackHole: false,
      pmtud: true,
      probes,
      note: `larger packets were answered "fragmentation needed"${said ? ` (MTU ${said.mtu})` : ''}`,
    };
  return {
    ...base,
    pathMtu: lo,
    blackHole: true,
    probes,
    note: `packets of ${lo + 1 === interfaceMtu ? interfaceMtu : `${lo + 1}–${interfaceMtu}`} bytes (the pod's interface allows ${interfaceMtu}) vanish without an ICMP "fragmentation needed"; the largest that crosses is ${lo}`,
  };
}

/** one network namespace's links and routes, as the kernel reader gives them */
export interface NetnsLinks {
  /** "host", "pod", "peer web" */
  label: string;
  links: KernelLink[];
  routes: KernelRoute[];
}

/** an end of the path inside a pod: its netns and the interface the path leaves or enters by */
export interface PathEnd {
  ns: NetnsLinks;
  ifName: string;
}

/**
 * The narrowest link along a path, in path order: the sender's interface (or, from the host, its route's device),
 * that interface's veth peer on the host and the bridge it is a port of, the host's device toward the destination
 * when the path leaves the host, the receiving pod's host veth and interface; and every route with an `mtu`
 * attribute that the sender or the host would use for the destination. The first of the smallest is named (a bridge
 * takes the smallest MTU of its ports, so the host veth that made it small comes first). Undefined when nothing is
 * narrower than `interfaceMtu`.
 */
export function narrowestLink(input: {
  host: NetnsLinks;
  /** the pod end the path starts from (undefined: the host sends) */
  from?: PathEnd;
  /** the pod end the path arrives at (undefined: the host or beyond it) */
  to?: PathEnd;
  dst: string;
  interfaceMtu: number;
  node?: string;
}): NarrowLink | undefined {
  const node = input.node ?? 'host';
  const out: NarrowLink[] = [];
  const add = (ns: NetnsLinks, l: KernelLink | undefined) => {
    if (l?.mtu !== undefined && !out.some((o) => o.netns === ns.label && o.interface === l.name))
      out.push({ node, netns: ns.label, interface: l.name, mtu: l.mtu });
  };
  const byName = (ns: NetnsLinks, name: string | undefined) => (name ? ns.links.find((l) => l.name === name) : undefined);
  const podSide = (end: PathEnd) => {
    const own = byName(end.ns, end.ifName);
    // a veth's peer in another netns is named by its ifindex there (the host's, for a pod's interface)
    const peer =
      own?.peerIfindex !== undefined && own.peerNetnsId !== undefined
        ? input.host.links.find((l) => l.ifindex === own.peerIfindex)
        : undefined;
    return { own, peer, bridge: byName(input.host, peer?.master) };
  };
  const routeMtu = (ns: NetnsLinks) => {
    const r = bestRoute(ns.routes, input.dst);
    if (r?.mtu !== undefined)
      out.push({ node, netns: ns.label, interface: `route to ${r.dst}${r.dev ? ` dev ${r.dev}` : ''}`, mtu: r.mtu });
    return r;
  };
  if (input.from) {
    const s = podSide(input.from);
    add(input.from.ns, s.own);
    routeMtu(input.from.ns);
    add(input.host, s.peer);
    add(input.host, s.bridge);
  }
  const hostRoute = routeMtu(input.host);
  if (!input.to) add(input.host, byName(input.host, hostRoute?.dev));
  else {
    const s = podSide(input.to);
    if (!input.from) add(input.host, byName(input.host, hostRoute?.dev));
    add(input.host, s.bridge);
    add(input.host, s.peer);
    add(input.to.ns, s.own);
  }
  let best: NarrowLink | undefined;
  for (const c of out) if (c.mtu < input.interfaceMtu && (!best || c.mtu < best.mtu)) best = c;
  return best;
}

/** the main table's route the kernel would pick for dst: the longest prefix, then the lowest metric */
export function bestRoute(routes: KernelRoute[], dst: string): KernelRoute | undefined {
  const fam = dst.includes(':') ? 6 : 4;
  let best: { r: KernelRoute; len: number } | undefined;
  for (const r of routes) {
    if (r.family !== fam || r.table !== 'main' || (r.type && r.type !== 'unicast')) continue;
    const len = prefixMatch(r.dst, dst);
    if (len === undefined) continue;
    if (!best || len > best.len || (len === best.len && (r.metric ?? 0) < (best.r.metric ?? 0))) best = { r, len };
  }
  return best?.r;
}

/** the prefix length of `cidr` when it contains ip ("default" is /0), else undefined */
function prefixMatch(cidr: string, ip: string): number | undefined {
  const fam = ip.includes(':') ? 6 : 4;
  if (cidr === 'default') return 0;
  const [net, lenText] = cidr.split('/');
  const bits = fam === 4 ? 32 : 128;
  const len = lenText === undefined ? bits : Number(lenText);
  const a = toBig(net!, fam);
  const b = toBig(ip, fam);
  if (a === undefined || b === undefined) return undefined;
  const shift = BigInt(bits - len);
  return a >> shift === b >> shift ? len : undefined;
}

function toBig(ip: string, fam: 4 | 6): bigint | undefined {
  if (fam === 4) {
    const p = ip.split('.').map(Number);
    if (p.length !== 4 || p.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) return undefined;
    return p.reduce((acc, x) => (acc << 8n) | BigInt(x), 0n);
  }
  if (!ip.includes(':')) return undefined;
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  if (groups.length !== 8) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}
