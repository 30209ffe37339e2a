/**
 * Reads a sandbox's network as the kernel has it: `ip` inside the netns (via nsenter, so any netns dir works),
 * `tc` and the nat tables on the host. Every command runs at once; one that fails only adds an error to the result.
 */
import type { LiveInterface, LiveRoute } from '../../../shared/domain/live';
import { describeCommand, type ProcessRunner } from '../os/exec';

export interface RawLiveNetwork {
  interfaces: LiveInterface[];
  routes: LiveRoute[];
  /** host links by name → kind ("veth", "ifb", "bridge", …) for the devices asked about */
  hostLinkKinds: Record<string, string>;
  /** root qdisc per host device asked about */
  qdiscs: Record<string, Array<{ kind: string; rate?: number; burst?: number }>>;
  /** `iptables -t nat -S` / `ip6tables -t nat -S` lines */
  nat: { v4: string[]; v6: string[] };
  errors: string[];
}

export interface LiveReader {
  read(netnsPath: string, hostDevices: string[], signal?: AbortSignal): Promise<RawLiveNetwork>;
}

const TIMEOUT_MS = 10_000;

interface IpAddrJson {
  ifindex: number;
  ifname: string;
  mtu?: number;
  operstate?: string;
  address?: string;
  linkinfo?: { info_kind?: string };
  addr_info?: Array<{ family: string; local: string; prefixlen: number; scope?: string }>;
}

interface IpRouteJson {
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
  scope?: string;
  metric?: number;
}

export class LinuxLiveReader implements LiveReader {
  constructor(private readonly runner: ProcessRunner) {}

  async read(netnsPath: string, hostDevices: string[], signal?: AbortSignal): Promise<RawLiveNetwork> {
    const errors: string[] = [];
    const json = async <T>(file: string, args: string[], fallback: T): Promise<T> => {
      const r = await this.runner
        .run({ file, args, timeoutMs: TIMEOUT_MS, signal })
        .catch((e: unknown) => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
      if (r.exitCode !== 0) {
        errors.push(`${describeCommand(file, args)}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
        return fallback;
      }
      try {
        return (r.stdout.trim() ? JSON.parse(r.stdout) : fallback) as T;
      } catch (e) {
        errors.push(`${describeCommand(file, args)}: unparseable output: ${(e as Error).message}`);
        return fallback;
      }
    };
    const lines = async (file: string, args: string[]) => {
      const r = await this.runner.run({ file, args, timeoutMs: TIMEOUT_MS, signal }).catch(() => undefined);
      if (!r || r.exitCode !== 0) {
        errors.push(`${describeCommand(file, args)}: ${r?.stderr.trim() || 'failed'}`);
        return [];
      }
      return r.stdout.split('\n').filter(Boolean);
    };
    const inNetns = (args: string[]) => ['--net=' + netnsPath, 'ip', ...args];

    const [addrs, routes4, routes6, links, qdiscLists, v4, v6] = await Promise.all([
      json<IpAddrJson[]>('nsenter', inNetns(['-d', '-j', 'addr', 'show']), []),
      json<IpRouteJson[]>('nsenter', inNetns(['-j', '-4', 'route', 'show']), []),
      json<IpRouteJson[]>('nsenter', inNetns(['-j', '-6', 'route', 'show']), []),
      json<IpAddrJson[]>('ip', ['-d', '-j', 'link', 'show'], []),
      Promise.all(
        hostDevices.map((dev) =>
          json<Array<{ kind: string; root?: boolean; options?: { rate?: number; burst?: number } }>>(
            'tc',
            ['-j', 'qdisc', 'show', 'dev', dev],
            [],
          ),
        ),
      ),
      lines('iptables', ['-t', 'nat', '-S']),
      lines('ip6tables', ['-t', 'nat', '-S']),
    ]);
    const wanted = new Set(hostDevices);
    return {
      interfaces: addrs.map((a) => ({
        name: a.ifname,
        ifindex: a.ifindex,
        mac: a.address,
        mtu: a.mtu,
        state: a.operstate,
        kind: a.linkinfo?.info_kind,
        addresses: (a.addr_info ?? []).map((x) => ({
          family: x.family === 'inet6' ? 6 : 4,
          address: x.local,
          prefixLen: x.prefixlen,
          scope: x.scope,
        })),
      })),
      routes: [...routes4.map((r) => toRoute(r, 4)), ...routes6.map((r) => toRoute(r, 6))],
      hostLinkKinds: Object.fromEntries(
        links.filter((l) => wanted.has(l.ifname)).map((l) => [l.ifname, l.linkinfo?.info_kind ?? 'unknown']),
      ),
      // tc prints tbf rates in bytes per second
      qdiscs: Object.fromEntries(
        hostDevices.map((dev, i) => [
          dev,
          (qdiscLists[i] ?? []).filter((q) => q.root).map((q) => ({ kind: q.kind, rate: q.options?.rate, burst: q.options?.burst })),
        ]),
      ),
      nat: { v4, v6 },
      errors,
    };
  }
}

function toRoute(r: IpRouteJson, family: 4 | 6): LiveRoute {
  return { family, dst: r.dst, gateway: r.gateway, dev: r.dev, protocol: r.protocol, scope: r.scope, metric: r.metric };
}
