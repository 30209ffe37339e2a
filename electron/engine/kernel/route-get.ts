/**
 * The route decision for one flow inside a network namespace: `ip -j route get <dst> [from <src>] [iif <dev>]
 * ipproto tcp sport <p> dport <q>`, and, when the kernel refuses (a blackhole, unreachable or prohibit route, or none at
 * all), the route that covers the destination from `ip -j route show table all`, so the answer names what stopped it.
 */
import type { ProcessRunner } from '../os/exec';

export interface RouteGetQuery {
  dst: string;
  /** a source address (for a route back, or a flow from a given address) */
  from?: string;
  /** the input interface, for a packet that arrives rather than one sent from this netns */
  iif?: string;
  sport?: number;
  dport?: number;
}

export type RouteDecision =
  | {
      ok: true;
      /** unicast, local, broadcast, … */
      type: string;
      dev?: string;
      gateway?: string;
      prefsrc?: string;
      table?: string;
      /** as `ip route get` prints it */
      text: string;
    }
  | {
      ok: false;
      /** what `ip route get` answered (e.g. "Invalid argument", "Network is unreachable") */
      error: string;
      /** the most specific route covering dst, when one does (its type says why: blackhole, unreachable, prohibit) */
      covering?: { type: string; dst: string; table?: string; text: string };
    };

export function routeGetArgs(q: RouteGetQuery): string[] {
  const args = ['-j', 'route', 'get', q.dst];
  if (q.from) args.push('from', q.from);
  if (q.iif) args.push('iif', q.iif);
  if (q.sport !== undefined || q.dport !== undefined) args.push('ipproto', 'tcp');
  if (q.sport !== undefined) args.push('sport', String(q.sport));
  if (q.dport !== undefined) args.push('dport', String(q.dport));
  return args;
}

interface IpRouteJson {
  type?: string;
  dst?: string;
  gateway?: string;
  dev?: string;
  prefsrc?: string;
  table?: string;
  from?: string;
}

function routeText(r: IpRouteJson): string {
  const parts = [r.type && r.type !== 'unicast' ? r.type : '', r.dst ?? ''];
  if (r.from) parts.push('from', r.from);
  if (r.gateway) parts.push('via', r.gateway);
  if (r.dev) parts.push('dev', r.dev);
  if (r.prefsrc) parts.push('src', r.prefsrc);
  if (r.table && r.table !== 'main') parts.push('table', r.table);
  return parts.filter(Boolean).join(' ');
}

/** the first entry of `ip -j route get` output */
export function parseRouteGet(stdout: string): RouteDecision | undefined {
  let list: IpRouteJson[];
  try {
    list = JSON.parse(stdout) as IpRouteJson[];
  } catch {
    return undefined;
  }
  const r = list[0];
  if (!r) return undefined;
  return { ok: true, type: r.type ?? 'unicast', dev: r.dev, gateway: r.gateway, prefsrc: r.prefsrc, table: r.table, text: routeText(r) };
}

/** the error text of a failed `ip route get` ("RTNETLINK answers: Invalid argument" → "Invalid argument") */
export function routeGetError(stderr: string): string {
  const line = stderr.trim().split('\n').pop() ?? '';
  return line.replace(/^RTNETLINK answers:\s*/, '') || 'no route';
}

/** an address as a number and its width in bits (undefined when it is not an address) */
function addrBits(ip: string): { n: bigint; bits: number } | undefined {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) {
    const o = ip.split('.').map(Number);
    if (o.some((x) => x > 255)) return undefined;
    return { n: o.reduce((acc, x) => (acc << 8n) | BigInt(x), 0n), bits: 32 };
  }
  if (!ip.includes(':')) return undefined;
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  if (groups.length !== 8) return undefined;
  return { n: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n), bits: 128 };
}

/** prefix length of a route's dst covering `dst`, or -1 when it does not cover it ("default" covers all) */
export function coverLength(routeDst: string, dst: string): number {
  const target = addrBits(dst);
  if (!target) return -1;
  if (routeDst === 'default') return 0;
  const [net, lenText] = routeDst.split('/');
  const base = addrBits(net!);
  if (!base || base.bits !== target.bits) return -1;
  const len = lenText === undefined ? base.bits : Number(lenText);
  const shift = BigInt(base.bits - len);
  return base.n >> shift === target.n >> shift ? len : -1;
}

/** the most specific route in `ip -j route show table all` output that covers dst (local/broadcast table entries skipped) */
export function coveringRoute(stdout: string, dst: string): { type: string; dst: string; table?: string; text: string } | undefined {
  let list: IpRouteJson[];
  try {
    list = JSON.parse(stdout) as IpRouteJson[];
  } catch {
    return undefined;
  }
  let best: { r: IpRouteJson; len: number } | undefined;
  for (const r of list) {
    if (!r.dst || r.table === 'local' || r.type === 'broadcast' || r.type === 'local' || r.type === 'multicast') continue;
    const len = coverLength(r.dst, dst);
    if (len > (best?.len ?? -1)) best = { r, len };
  }
  if (!best) return undefined;
  return { type: best.r.type ?? 'unicast', dst: best.r.dst!, table: best.r.table, text: routeText(best.r) };
}

/** `ip route get` in the netns pinned at netnsPath (undefined: the host's) */
export async function routeGet(
  runner: ProcessRunner,
  netnsPath: string | undefined,
  q: RouteGetQuery,
  signal?: AbortSignal,
): Promise<RouteDecision> {
  const ip = (args: string[]) =>
    netnsPath === undefined
      ? runner.run({ file: 'ip', args, timeoutMs: 5000, signal })
      : runner.run({ file: 'nsenter', args: [`--net=${netnsPath}`, 'ip', ...args], timeoutMs: 5000, signal });
  const r = await ip(routeGetArgs(q));
  if (r.exitCode === 0) {
    const d = parseRouteGet(r.stdout);
    if (d) return d;
  }
  const error = r.exitCode === 0 ? 'unreadable answer' : routeGetError(r.stderr);
  const family = q.dst.includes(':') ? '-6' : '-4';
  const all = await ip([family, '-j', 'route', 'show', 'table', 'all']);
  return { ok: false, error, covering: all.exitCode === 0 ? coveringRoute(all.stdout, q.dst) : undefined };
}
