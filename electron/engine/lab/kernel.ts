/**
 * Kernel (and disk) snapshots for the lab: one line per fact, so "what did the run create" and "what is left after
 * DEL" are set differences. The reader runs `ip`, `iptables`/`ip6tables` and `tc` on the host and `ip` inside the
 * throwaway netns (via nsenter), and lists the host-local reservation and libcni cache files.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LabKernelKind } from '../../../shared/domain/lab';
import { describeCommand, type ProcessRunner } from '../os/exec';

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

export interface KernelReader {
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

interface IpAddr {
  ifname: string;
  mtu?: number;
  master?: string;
  linkinfo?: { info_kind?: string; info_slave_kind?: string; info_slave_data?: { hairpin?: boolean } };
  addr_info?: Array<{ family: string; local: string; prefixlen: number; scope?: string }>;
}
interface IpRoute {
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
  scope?: string;
}
interface Qdisc {
  kind: string;
  handle?: string;
  dev: string;
  root?: boolean;
  parent?: string;
  options?: { rate?: number; burst?: number; lat?: number };
}

const TIMEOUT_MS = 15_000;

/** one line per link: what a plugin sets (kind, MTU, bridge port, hairpin), not counters or state */
export function linkLine(l: IpAddr): string {
  const kind = l.linkinfo?.info_kind ?? 'device';
  const hairpin = l.linkinfo?.info_slave_data?.hairpin;
  return `${l.ifname} ${kind} mtu ${l.mtu ?? '?'}${l.master ? ` master ${l.master}` : ''}${hairpin !== undefined ? ` hairpin ${hairpin ? 'on' : 'off'}` : ''}`;
}

/** link-local addresses are the kernel's (derived from a random MAC), not a plugin's: left out */
export function addressLines(l: IpAddr): string[] {
  return (l.addr_info ?? []).filter((a) => a.scope !== 'link').map((a) => `${l.ifname} ${a.local}/${a.prefixlen}`);
}

export function routeLine(r: IpRoute, family: 4 | 6): string {
  return `ipv${family} ${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}${r.dev ? ` dev ${r.dev}` : ''}${r.protocol ? ` proto ${r.protocol}` : ''}${r.scope ? ` scope ${r.scope}` : ''}`;
}

export function qdiscLine(q: Qdisc): string {
  const opts = q.options ?? {};
  const shape = [opts.rate !== undefined ? `rate ${opts.rate}` : '', opts.burst !== undefined ? `burst ${opts.burst}` : '']
    .filter(Boolean)
    .join(' ');
  return `dev ${q.dev} ${q.kind} ${q.handle ?? ''} ${q.root ? 'root' : `parent ${q.parent ?? '?'}`}${shape ? ` ${shape}` : ''}`.replace(
    / +/g,
    ' ',
  );
}

export class LinuxKernelReader implements KernelReader {
  constructor(private readonly runner: ProcessRunner) {}

  async read(scope: KernelScope, signal?: AbortSignal): Promise<{ snapshot: KernelSnapshot; errors: string[] }> {
    const errors: string[] = [];
    const run = async (file: string, args: string[]): Promise<string | undefined> => {
      const r = await this.runner
        .run({ file, args, timeoutMs: TIMEOUT_MS, signal })
        .catch((e: unknown) => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
      if (r.exitCode !== 0) {
        errors.push(`${describeCommand(file, args)}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
        return undefined;
      }
      return r.stdout;
    };
    const json = async <T>(file: string, args: string[]): Promise<T[]> => {
      const text = await run(file, args);
      if (!text?.trim()) return [];
      try {
        return JSON.parse(text) as T[];
      } catch (e) {
        errors.push(`${describeCommand(file, args)}: unparseable output: ${(e as Error).message}`);
        return [];
      }
    };
    const ns = scope.netns;
    const inNs = (args: string[]) => ['--net=' + ns, 'ip', ...args];
    const rules = (tool: string, table: string) =>
      run(tool, ['-w', '5', '-t', table, '-S']).then((t) =>
        (t ?? '')
          .split('\n')
          .filter(Boolean)
          .map((l) => `${table} ${l}`),
      );
    const [nsLinks, nsRoutes4, nsRoutes6, hostLinks, qdiscs, nat4, filter4, nat6, filter6, ipam, cache] = await Promise.all([
      ns ? json<IpAddr>('nsenter', inNs(['-d', '-j', 'addr', 'show'])) : Promise.resolve([]),
      ns ? json<IpRoute>('nsenter', inNs(['-j', '-4', 'route', 'show'])) : Promise.resolve([]),
      ns ? json<IpRoute>('nsenter', inNs(['-j', '-6', 'route', 'show'])) : Promise.resolve([]),
      json<IpAddr>('ip', ['-d', '-j', 'addr', 'show']),
      json<Qdisc>('tc', ['-j', 'qdisc', 'show']),
      rules('iptables', 'nat'),
      rules('iptables', 'filter'),
      rules('ip6tables', 'nat'),
      rules('ip6tables', 'filter'),
      this.ipamFiles(scope.ipamDirs, errors),
      this.cacheFiles(scope, errors),
    ]);
    const snapshot = emptySnapshot();
    snapshot['netns-link'] = nsLinks.map(linkLine);
    snapshot['netns-address'] = nsLinks.flatMap(addressLines);
    snapshot['netns-route'] = [...nsRoutes4.map((r) => routeLine(r, 4)), ...nsRoutes6.map((r) => routeLine(r, 6))];
    snapshot.link = hostLinks.map(linkLine);
    snapshot['host-address'] = hostLinks.flatMap(addressLines);
    snapshot.qdisc = qdiscs.map(qdiscLine);
    snapshot.iptables = [...nat4, ...filter4];
    snapshot.ip6tables = [...nat6, ...filter6];
    snapshot.ipam = ipam;
    snapshot.cache = cache;
    return { snapshot, errors };
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
