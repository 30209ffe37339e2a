/**
 * Kernel (and disk) snapshots for the lab: one line per fact, so "what did the run create" and "what is left after
 * DEL" are set differences. The kernel's side comes from the engine's kernel reader (links, addresses, routes of every
 * table and policy rules in the throwaway netns; links, addresses, routes of every table, policy rules, qdiscs and the
 * nat and filter tables of both families on the host); the disk's side lists the host-local reservation and libcni
 * cache files. Beside the lines, values a plugin changes in place rather than creates (sysctls per netns and per
 * interface, the state, name, MTU, master and netns of host links) are kept as values, so changes.ts can say
 * "before → after" (docs/semantics.md#lab-changed-state).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LabKernelKind } from '../../../shared/domain/lab';
import { ruleLine } from '../kernel/lines';
import { ruleSpecLines, tablesOf } from '../kernel/netfilter';
import {
  emptyKernelState,
  type KernelLink,
  type KernelQdisc,
  type KernelReader,
  type KernelRoute,
  type KernelState,
} from '../kernel/types';

export { ruleLine };

export type KernelSnapshot = Record<LabKernelKind, string[]>;

/** what a link is, for following it across a rename or a move between namespaces */
export interface WatchedLink {
  name: string;
  ifindex: number;
  mac?: string;
  kind?: string;
  /** operational state (UP, DOWN, LOWERLAYERDOWN, …) */
  state?: string;
  /** administratively up (the UP flag) */
  up: boolean;
  mtu?: number;
  master?: string;
}

/** values plugins change in place: read at each snapshot, compared by changes.ts */
export interface WatchedState {
  hostLinks: WatchedLink[];
  netnsLinks: WatchedLink[];
  hostSysctls: Record<string, string>;
  netnsSysctls: Record<string, string>;
}

export function emptyWatched(): WatchedState {
  return { hostLinks: [], netnsLinks: [], hostSysctls: {}, netnsSysctls: {} };
}

/** what the conflist says it will touch beyond what it creates */
export interface KernelWatch {
  /** host links the conflist names (host-device's device, macvlan/ipvlan's master, bridges) */
  hostLinks: string[];
  /** sysctls the conflist names (tuning's `sysctl` map), read in the run's netns */
  sysctls: string[];
}

export interface KernelScope {
  /** the throwaway netns, when it exists */
  netns?: string;
  /** `<dataDir>/<network>` of each host-local IPAM */
  ipamDirs: string[];
  /** libcni results dir */
  cacheResultsDir: string;
  containerId: string;
  watch?: KernelWatch;
}

export interface LabSnapshotRead {
  snapshot: KernelSnapshot;
  /** absent from readers that keep lines only (test doubles) */
  watched?: WatchedState;
  errors: string[];
}

export interface LabSnapshotReader {
  read(scope: KernelScope, signal?: AbortSignal): Promise<LabSnapshotRead>;
}

export const KERNEL_KINDS: LabKernelKind[] = [
  'netns-link',
  'netns-address',
  'netns-route',
  'netns-rule',
  'link',
  'host-address',
  'host-route',
  'host-rule',
  'iptables',
  'ip6tables',
  'qdisc',
  'ipam',
  'cache',
];

export function emptySnapshot(): KernelSnapshot {
  return Object.fromEntries(KERNEL_KINDS.map((k) => [k, []])) as unknown as KernelSnapshot;
}

const TIMEOUT_MS = 15_000;

/** one line per link: what a plugin sets (kind, MTU, bridge port, hairpin), not counters or state */
export function linkLine(l: KernelLink): string {
  const kind = l.kind ?? 'device';
  const hairpin = l.hairpin;
  return `${l.name} ${kind} mtu ${l.mtu ?? '?'}${l.master ? ` master ${l.master}` : ''}${hairpin !== undefined ? ` hairpin ${hairpin ? 'on' : 'off'}` : ''}`;
}

/** a link in the run's netns also says its MAC: tuning sets it there (the host's MACs are other pods' business) */
export function netnsLinkLine(l: KernelLink): string {
  return `${linkLine(l)}${l.mac ? ` mac ${l.mac}` : ''}`;
}

/** link-local addresses are the kernel's (derived from a random MAC), not a plugin's: left out */
export function addressLines(l: KernelLink): string[] {
  return l.addresses.filter((a) => a.scope !== 'link').map((a) => `${l.name} ${a.address}/${a.prefixLen}`);
}

/** a route of the main table reads as `ip route` prints it; any other table is named at the end */
export function routeLine(r: KernelRoute): string {
  return `ipv${r.family} ${r.type && r.type !== 'unicast' ? `${r.type} ` : ''}${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}${r.dev ? ` dev ${r.dev}` : ''}${r.protocol ? ` proto ${r.protocol}` : ''}${r.scope ? ` scope ${r.scope}` : ''}${r.table !== 'main' ? ` table ${r.table}` : ''}`;
}

/**
 * Every table but `local`: the kernel fills that one itself from the addresses (local, broadcast, multicast), so it
 * says nothing an address line does not.
 */
export function routeLines(routes: KernelRoute[]): string[] {
  return routes.filter((r) => r.table !== 'local').map(routeLine);
}

/** network-wide sysctls a plugin may turn (bridge and ptp turn on forwarding; rp_filter decides asymmetric paths) */
export const NETNS_SYSCTLS = [
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.all.rp_filter',
  'net.ipv4.conf.all.proxy_arp',
  'net.ipv6.conf.all.forwarding',
  'net.ipv6.conf.all.accept_ra',
];

/** per-interface sysctls plugins set (bridge: arp_notify, accept_dad; ptp/macvlan: proxy_arp; tuning: anything) */
export const INTERFACE_SYSCTLS = [
  'net.ipv4.conf.IF.rp_filter',
  'net.ipv4.conf.IF.proxy_arp',
  'net.ipv4.conf.IF.forwarding',
  'net.ipv4.conf.IF.arp_notify',
  'net.ipv6.conf.IF.accept_ra',
  'net.ipv6.conf.IF.accept_dad',
  'net.ipv6.conf.IF.forwarding',
  'net.ipv6.conf.IF.disable_ipv6',
];

/** a sysctl's interface level, as sysctl(8) spells names: a dot inside the interface name is a slash */
export function interfaceSysctls(iface: string): string[] {
  const level = iface.replace(/\./g, '/');
  return INTERFACE_SYSCTLS.map((n) => n.replace('.IF.', `.${level}.`));
}

export function watchedLink(l: KernelLink): WatchedLink {
  return {
    name: l.name,
    ifindex: l.ifindex,
    up: (l.flags ?? []).includes('UP'),
    ...(l.mac !== undefined ? { mac: l.mac } : {}),
    ...(l.kind !== undefined ? { kind: l.kind } : {}),
    ...(l.state !== undefined ? { state: l.state } : {}),
    ...(l.mtu !== undefined ? { mtu: l.mtu } : {}),
    ...(l.master !== undefined ? { master: l.master } : {}),
  };
}

/** a missing sysctl is recorded as absent (the interface is gone, IPv6 is off), not as a failed read */
const notReadable = (e: string) => /^sysctl \S+: not readable in /.test(e);

export function qdiscLine(q: KernelQdisc): string {
  const shape = [
    q.rateBytesPerSecond !== undefined ? `rate ${q.rateBytesPerSecond}` : '',
    q.burstBytes !== undefined ? `burst ${q.burstBytes}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return `dev ${q.dev} ${q.kind} ${q.handle ?? ''} ${q.root ? 'root' : `parent ${q.parent ?? '?'}`}${shape ? ` ${shape}` : ''}`.replace(
    / +/g,
    ' ',
  );
}

/** The lab's snapshot over the kernel reader, plus the host-local reservations and libcni cache files on disk. */
export class KernelLabSnapshotReader implements LabSnapshotReader {
  constructor(private readonly kernel: KernelReader) {}

  async read(scope: KernelScope, signal?: AbortSignal): Promise<LabSnapshotRead> {
    const errors: string[] = [];
    const opts = { signal, timeoutMs: TIMEOUT_MS };
    const watch = scope.watch ?? { hostLinks: [], sysctls: [] };
    // links first, then the sysctls of the interfaces that are there: asking for a missing one is only noise
    const withSysctls = async (
      netns: string | undefined,
      query: Parameters<KernelReader['read']>[1],
      names: (s: KernelState) => string[],
    ) => {
      const state = await this.kernel.read(netns, query, opts);
      const wanted = [...new Set(names(state))];
      if (wanted.length === 0) return state;
      const sys = await this.kernel.read(netns, { sysctls: wanted }, opts);
      return { ...state, sysctls: sys.sysctls, errors: [...state.errors, ...sys.errors.filter((e) => !notReadable(e))] };
    };
    const [pod, host, ipam, cache] = await Promise.all([
      scope.netns
        ? withSysctls(scope.netns, { links: true, routes: true, rules: true }, (s) => [
            ...NETNS_SYSCTLS,
            ...['all', 'default', ...s.links.map((l) => l.name)].flatMap(interfaceSysctls),
            ...watch.sysctls,
          ])
        : Promise.resolve(emptyKernelState()),
      withSysctls(undefined, { links: true, routes: true, rules: true, qdiscs: true, netfilter: true }, (s) => [
        ...NETNS_SYSCTLS,
        ...['default', ...s.links.filter((l) => watch.hostLinks.includes(l.name)).map((l) => l.name)].flatMap(interfaceSysctls),
      ]),
      this.ipamFiles(scope.ipamDirs, errors),
      this.cacheFiles(scope, errors),
    ]);
    const rules = (family: 4 | 6) =>
      ['nat', 'filter'].flatMap((table) => ruleSpecLines(tablesOf(host.netfilter, family), table).map((l) => `${table} ${l}`));
    const snapshot = emptySnapshot();
    snapshot['netns-link'] = pod.links.map(netnsLinkLine);
    snapshot['netns-address'] = pod.links.flatMap(addressLines);
    snapshot['netns-route'] = routeLines(pod.routes);
    snapshot['netns-rule'] = pod.rules.map(ruleLine);
    snapshot.link = host.links.map(linkLine);
    snapshot['host-address'] = host.links.flatMap(addressLines);
    snapshot['host-route'] = routeLines(host.routes);
    snapshot['host-rule'] = host.rules.map(ruleLine);
    snapshot.qdisc = host.qdiscs.map(qdiscLine);
    snapshot.iptables = rules(4);
    snapshot.ip6tables = rules(6);
    snapshot.ipam = ipam;
    snapshot.cache = cache;
    const watched: WatchedState = {
      hostLinks: host.links.map(watchedLink),
      netnsLinks: pod.links.map(watchedLink),
      hostSysctls: host.sysctls,
      netnsSysctls: pod.sysctls,
    };
    return { snapshot, watched, errors: [...pod.errors, ...host.errors, ...errors] };
  }

  /** each reservation as `<dir>/<file> <first line>` (host-local writes the container id, then the ifname) */
  private async ipamFiles(dirs: string[], errors: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const dir of dirs) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') errors.push(`${dir}: ${(e as Error).message}`);
        continue;
      }
      for (const name of names.sort()) {
        if (name === 'lock') continue;
        const content = await readFile(path.join(dir, name), 'utf8').catch(() => '');
        out.push(`${path.join(dir, name)} ${content.split(/\r?\n/)[0] ?? ''}`.trim());
      }
    }
    return out;
  }

  private async cacheFiles(scope: KernelScope, errors: string[]): Promise<string[]> {
    try {
      return (await readdir(scope.cacheResultsDir))
        .filter((n) => n.includes(scope.containerId))
        .sort()
        .map((n) => path.join(scope.cacheResultsDir, n));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') errors.push(`${scope.cacheResultsDir}: ${(e as Error).message}`);
      return [];
    }
  }
}
