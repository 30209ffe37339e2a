/**
 * From the JSON iproute2 prints (`ip -j`, `tc -j`, `bridge -j`, iproute2 6.1 shapes) and the lines `grep -H` prints
 * for /proc/sys files, to the kernel types. Pure: tested over recorded output. Each throws on output that is not the
 * JSON array the command prints; the reader turns that into an error of the read.
 */
import type {
  BridgePort,
  IpFamily,
  KernelAddress,
  KernelFilter,
  KernelFilterAction,
  KernelLink,
  KernelQdisc,
  KernelRoute,
  KernelRule,
} from './types';

type Json = Record<string, unknown>;

function jsonArray(text: string): Json[] {
  if (!text.trim()) return [];
  const v: unknown = JSON.parse(text);
  if (!Array.isArray(v)) throw new Error('expected a JSON array');
  return v.filter((x): x is Json => typeof x === 'object' && x !== null);
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

/** Drops the keys whose value is undefined, so a parsed record has only what the kernel said. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** `ip -d -j addr show`: links with link details and addresses in one read. */
export function parseLinks(text: string): KernelLink[] {
  return jsonArray(text).map((l) => {
    const info = obj(l.linkinfo);
    const slave = obj(info.info_slave_data);
    const data = obj(info.info_data);
    const addrs = Array.isArray(l.addr_info) ? l.addr_info.map(obj) : [];
    return defined<KernelLink>({
      ifindex: num(l.ifindex) ?? 0,
      name: str(l.ifname) ?? '',
      kind: str(info.info_kind),
      slaveKind: str(info.info_slave_kind),
      master: str(l.master),
      hairpin: bool(slave.hairpin),
      peerIfindex: num(l.link_index),
      peerName: str(l.link),
      peerNetnsId: num(l.link_netnsid),
      alias: str(l.ifalias),
      mode: str(data.mode),
      vlanId: str(info.info_kind) === 'vlan' ? num(data.id) : undefined,
      vrfTable: str(info.info_kind) === 'vrf' ? num(data.table) : undefined,
      flags: Array.isArray(l.flags) ? l.flags.filter((f): f is string => typeof f === 'string') : undefined,
      state: str(l.operstate),
      mtu: num(l.mtu),
      mac: str(l.address),
      // entries without an address (some kernels list a bare family) are not addresses
      addresses: addrs
        .filter((a) => typeof a.local === 'string')
        .map((a) =>
          defined<KernelAddress>({
            family: a.family === 'inet6' ? 6 : 4,
            address: a.local as string,
            prefixLen: num(a.prefixlen) ?? 0,
            scope: str(a.scope),
          }),
        ),
    });
  });
}

/**
 * `tc -j filter show dev <dev> ingress`: tc leaves the device out of each entry, and lists a filter's header entries
 * (no options) before the one that carries its actions.
 */
export function parseFilters(text: string, dev: string): KernelFilter[] {
  return jsonArray(text).map((f) => {
    const actions = Array.isArray(obj(f.options).actions) ? (obj(f.options).actions as unknown[]).map(obj) : [];
    return defined<KernelFilter>({
      dev,
      parent: str(f.parent),
      kind: str(f.kind) ?? '',
      pref: num(f.pref),
      actions: actions.map((a) =>
        defined<KernelFilterAction>({
          kind: str(a.kind) ?? '',
          action: str(a.mirred_action),
          direction: str(a.direction),
          toDev: str(a.to_dev),
        }),
      ),
    });
  });
}

/** `ip -j -4|-6 route show table all`: routes of the main table carry no table name. */
export function parseRoutes(text: string, family: IpFamily): KernelRoute[] {
  return jsonArray(text).map((r) =>
    defined<KernelRoute>({
      family,
      table: str(r.table) ?? 'main',
      type: str(r.type),
      dst: str(r.dst) ?? '',
      gateway: str(r.gateway),
      dev: str(r.dev),
      protocol: str(r.protocol),
      scope: str(r.scope),
      metric: num(r.metric),
      prefsrc: str(r.prefsrc),
      mtu: routeMtu(r.metrics),
    }),
  );
}

/** `metrics: [{mtu: 1400}, …]` as `ip -j route` prints a route's metrics */
function routeMtu(metrics: unknown): number | undefined {
  if (!Array.isArray(metrics)) return undefined;
  for (const m of metrics) if (m && typeof m === 'object' && 'mtu' in m) return num((m as { mtu: unknown }).mtu);
  return undefined;
}

/** `ip -j -4|-6 rule show`: a selector's address and its length come apart (`src` + `srclen`). */
export function parseRules(text: string, family: IpFamily): KernelRule[] {
  const cidr = (addr: unknown, len: unknown) => {
    const a = str(addr);
    if (a === undefined) return undefined;
    return num(len) === undefined ? a : `${a}/${num(len)}`;
  };
  return jsonArray(text).map((r) =>
    defined<KernelRule>({
      family,
      priority: num(r.priority) ?? 0,
      from: cidr(r.src, r.srclen) ?? 'all',
      to: cidr(r.dst, r.dstlen),
      iif: str(r.iif),
      oif: str(r.oif),
      fwmark: str(r.fwmark),
      table: str(r.table),
      action: str(r.action),
    }),
  );
}

/** `tc -j qdisc show [dev <dev>]`: asked for one device, tc leaves the device out of each entry. */
export function parseQdiscs(text: string, dev?: string): KernelQdisc[] {
  return jsonArray(text).map((q) => {
    const o = obj(q.options);
    return defined<KernelQdisc>({
      dev: str(q.dev) ?? dev ?? '',
      kind: str(q.kind) ?? '',
      handle: str(q.handle),
      root: q.root === true,
      parent: str(q.parent),
      rateBytesPerSecond: num(o.rate),
      burstBytes: num(o.burst),
      latencyMicroseconds: num(o.lat),
    });
  });
}

/** `bridge -d -j link show`: the host's bridge ports. */
export function parseBridgePorts(text: string): BridgePort[] {
  return jsonArray(text).map((p) =>
    defined<BridgePort>({
      ifindex: num(p.ifindex) ?? 0,
      name: str(p.ifname) ?? '',
      master: str(p.master),
      state: str(p.state),
      hairpin: bool(p.hairpin),
    }),
  );
}

/**
 * The /proc/sys path of a sysctl: dots separate levels, and a slash in a level (an interface `eth0.100` is written
 * `eth0/100`) stands for a dot, as sysctl(8) spells it.
 */
export function sysctlPath(name: string): string {
  return `/proc/sys/${name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'))}`;
}

/** The inverse of sysctlPath. */
export function sysctlName(path: string): string {
  return path.replace(/^\/proc\/sys\//, '').replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/** A name that can only name a file under /proc/sys: levels of word characters, dashes, colons, at and plus signs. */
export function isSysctlName(name: string): boolean {
  return /^[A-Za-z0-9_]+(\.[A-Za-z0-9_\-:@+/]+)+$/.test(name) && !name.split(/[./]/).some((l) => l === '' || l === '..');
}

/** `grep -H ^ <files>`: `path:value` per line; a value of several lines (rare) is joined back with newlines. */
export function parseSysctlLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0 || !line.startsWith('/proc/sys/')) continue;
    const name = sysctlName(line.slice(0, colon));
    const value = line.slice(colon + 1);
    out[name] = name in out ? `${out[name]}\n${value}` : value;
  }
  return out;
}
