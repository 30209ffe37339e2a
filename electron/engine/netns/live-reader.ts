/**
 * Reads a sandbox's network as the kernel has it, through the engine's one kernel reader: inside the netns and on
 * the host at once; a command that fails only adds an error to the result.
 */
import type { LiveInterface, LiveRoute } from '../../../shared/domain/live';
import { ruleSpecLines, tablesOf } from '../kernel/netfilter';
import type { KernelReader, KernelRoute, KernelRule } from '../kernel/types';

export interface RawLiveNetwork {
  interfaces: LiveInterface[];
  routes: LiveRoute[];
  /** host links by name → kind ("veth", "ifb", "bridge", …) for the devices asked about */
  hostLinkKinds: Record<string, string>;
  /** root qdisc per host device asked about */
  qdiscs: Record<string, Array<{ kind: string; rate?: number; burst?: number }>>;
  /** the nat table of each family as `iptables -t nat -S` / `ip6tables -t nat -S` list it */
  nat: { v4: string[]; v6: string[] };
  /** policy rules in the netns, when asked for */
  rules?: KernelRule[];
  /** routes of the netns's tables other than main and local (sbr's), when rules were asked for */
  tableRoutes?: Array<LiveRoute & { table: string }>;
  /** the sysctls asked for, as read inside the netns */
  sysctls?: Record<string, string>;
  /** the filter table of each family, when asked for */
  filter?: { v4: string[]; v6: string[] };
  errors: string[];
}

/** what some plugins' effects need beyond the live view's own read (plugin-effects.ts) */
export interface LiveExtraQuery {
  rules?: boolean;
  sysctls?: string[];
  filter?: boolean;
}

export interface LiveReader {
  read(netnsPath: string, hostDevices: string[], signal?: AbortSignal, extra?: LiveExtraQuery): Promise<RawLiveNetwork>;
}

/**
 * The live view's read over the kernel reader: addresses and main-table routes inside the netns; the kinds and root
 * qdiscs of the host devices asked about, and the nat table of both families, on the host.
 */
export class KernelLiveReader implements LiveReader {
  constructor(private readonly kernel: KernelReader) {}

  async read(netnsPath: string, hostDevices: string[], signal?: AbortSignal, extra: LiveExtraQuery = {}): Promise<RawLiveNetwork> {
    const sysctls = extra.sysctls?.length ? { sysctls: extra.sysctls } : {};
    const [pod, host] = await Promise.all([
      this.kernel.read(netnsPath, { links: true, routes: true, ...(extra.rules ? { rules: true } : {}), ...sysctls }, { signal }),
      this.kernel.read(
        undefined,
        { links: true, qdiscs: { devices: hostDevices }, netfilter: { tables: extra.filter ? ['nat', 'filter'] : ['nat'] } },
        { signal },
      ),
    ]);
    const wanted = new Set(hostDevices);
    return {
      interfaces: pod.links.map((l) => ({
        name: l.name,
        ifindex: l.ifindex,
        mac: l.mac,
        mtu: l.mtu,
        state: l.state,
        kind: l.kind,
        addresses: l.addresses.map((a) => ({ family: a.family, address: a.address, prefixLen: a.prefixLen, scope: a.scope })),
      })),
      // the main table, v4 then v6: what `ip route` shows
      routes: pod.routes.filter((r) => r.table === 'main').map(toRoute),
      hostLinkKinds: Object.fromEntries(host.links.filter((l) => wanted.has(l.name)).map((l) => [l.name, l.kind ?? 'unknown'])),
      // tc prints tbf rates in bytes per second
      qdiscs: Object.fromEntries(
        hostDevices.map((dev) => [
          dev,
          host.qdiscs
            .filter((q) => q.dev === dev && q.root)
            .map((q) => ({ kind: q.kind, rate: q.rateBytesPerSecond, burst: q.burstBytes })),
        ]),
      ),
      nat: {
        v4: ruleSpecLines(tablesOf(host.netfilter, 4), 'nat'),
        v6: ruleSpecLines(tablesOf(host.netfilter, 6), 'nat'),
      },
      ...(extra.rules
        ? {
            rules: pod.rules,
            tableRoutes: pod.routes
              .filter((r) => r.table !== 'main' && r.table !== 'local')
              .map((r) => ({ ...toRoute(r), table: r.table })),
          }
        : {}),
      ...(extra.sysctls?.length ? { sysctls: pod.sysctls } : {}),
      ...(extra.filter
        ? { filter: { v4: ruleSpecLines(tablesOf(host.netfilter, 4), 'filter'), v6: ruleSpecLines(tablesOf(host.netfilter, 6), 'filter') } }
        : {}),
      errors: [...pod.errors, ...host.errors],
    };
  }
}

function toRoute(r: KernelRoute): LiveRoute {
  return { family: r.family, dst: r.dst, gateway: r.gateway, dev: r.dev, protocol: r.protocol, scope: r.scope, metric: r.metric };
}
