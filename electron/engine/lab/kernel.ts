/**
 * Kernel (and disk) snapshots for the lab: one line per fact, so "what did the run create" and "what is left after
 * DEL" are set differences. The kernel's side comes from the engine's kernel reader (links, addresses, routes in the
 * throwaway netns; links, addresses, qdiscs and the nat and filter tables of both families on the host); the disk's
 * side lists the host-local reservation and libcni cache files.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LabKernelKind } from '../../../shared/domain/lab';
import { ruleSpecLines, tablesOf } from '../kernel/netfilter';
import { emptyKernelState, type KernelLink, type KernelQdisc, type KernelReader, type KernelRoute } from '../kernel/types';

export type KernelSnapshot = Record<LabKernelKind, string[]>;

export interface KernelScope {
  /** the throwaway netns, when it exists */
  netns?: string;
  /** `<dataDir>/<network>` of each host-local IPAM */
  ipamDirs: string[];
  /** libcni results dir */
  cacheResultsDir: string;
  containerId: string;
}

export interface LabSnapshotReader {
  read(scope: KernelScope, signal?: AbortSignal): Promise<{ snapshot: KernelSnapshot; errors: string[] }>;
}

export const KERNEL_KINDS: LabKernelKind[] = [
  'netns-link',
  'netns-address',
  'netns-route',
  'link',
  'host-address',
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

/** link-local addresses are the kernel's (derived from a random MAC), not a plugin's: left out */
export function addressLines(l: KernelLink): string[] {
  return l.addresses.filter((a) => a.scope !== 'link').map((a) => `${l.name} ${a.address}/${a.prefixLen}`);
}

export function routeLine(r: KernelRoute): string {
  return `ipv${r.family} ${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}${r.dev ? ` dev ${r.dev}` : ''}${r.protocol ? ` proto ${r.protocol}` : ''}${r.scope ? ` scope ${r.scope}` : ''}`;
}

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

  async read(scope: KernelScope, signal?: AbortSignal): Promise<{ snapshot: KernelSnapshot; errors: string[] }> {
    const errors: string[] = [];
    const opts = { signal, timeoutMs: TIMEOUT_MS };
    const [pod, host, ipam, cache] = await Promise.all([
      scope.netns ? this.kernel.read(scope.netns, { links: true, routes: true }, opts) : Promise.resolve(emptyKernelState()),
      this.kernel.read(undefined, { links: true, qdiscs: true, netfilter: true }, opts),
      this.ipamFiles(scope.ipamDirs, errors),
      this.cacheFiles(scope, errors),
    ]);
    const rules = (family: 4 | 6) =>
      ['nat', 'filter'].flatMap((table) => ruleSpecLines(tablesOf(host.netfilter, family), table).map((l) => `${table} ${l}`));
    const snapshot = emptySnapshot();
    snapshot['netns-link'] = pod.links.map(linkLine);
    snapshot['netns-address'] = pod.links.flatMap(addressLines);
    // the main table, v4 then v6: what `ip route` shows
    snapshot['netns-route'] = pod.routes.filter((r) => r.table === 'main').map(routeLine);
    snapshot.link = host.links.map(linkLine);
    snapshot['host-address'] = host.links.flatMap(addressLines);
    snapshot.qdisc = host.qdiscs.map(qdiscLine);
    snapshot.iptables = rules(4);
    snapshot.ip6tables = rules(6);
    snapshot.ipam = ipam;
    snapshot.cache = cache;
    return { snapshot, errors: [...pod.errors, ...host.errors, ...errors] };
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
