/**
 * A simulated network for the reachability probe: addresses belong to namespaces (the host's, or a pinned netns
 * path), host-port connects follow portmap's DNAT rules in chain order (first match wins, as the kernel does), and a
 * connect lands on a responder (which sends its banner), on an existing listener (silent), or is refused. Tests add
 * listeners (`listen`), black-hole addresses (`blackhole`) and check that every agent was closed (`openAgents`).
 * The builder (test-engine.ts) wires `world` to the FakeKernel the fake CNI plugins wrote to.
 */
import type { KernelLink, KernelRoute } from '../../electron/engine/kernel/types';
import type { ConnectOutcome, DnsOutcome, InterfaceLink, PingOutcome, ProbeAgent, ProbeNet } from '../../electron/engine/netns/probe-net';

export interface FakeProbeWorld {
  /** address → namespace ("host" or a netns path) */
  addresses: Map<string, string>;
  /** `iptables -t nat -S` lines (v4 and v6), in chain order */
  nat: { v4: string[]; v6: string[] };
}

const HOST = 'host';

export class FakeProbeNet implements ProbeNet {
  /** existing listeners per namespace (tests add them) */
  readonly listening = new Map<string, Set<number>>();
  /** responders the probe opened, per namespace: port → banner */
  readonly responders = new Map<string, Map<number, string>>();
  /** connects to these addresses time out */
  readonly blackholed = new Set<string>();
  /** connects to these `address|port` pairs time out (a port-specific DROP rule on the way) */
  readonly blockedPorts = new Set<string>();
  readonly opened: Array<{ netns: string; closed: boolean }> = [];
  /** what the kernel says about a pod interface, per `<netns path>/<ifName>` (tests set it; unset: nothing known) */
  readonly interfaceLinks = new Map<string, InterfaceLink>();
  /** the interfaces whose link the probe asked about */
  readonly linkReads: string[] = [];
  connects: Array<{ from: string; host: string; port: number; outcome: ConnectOutcome }> = [];
  /** DNS servers by address: what each answers (unset: the query times out; a blackholed address too) */
  readonly nameservers = new Map<string, DnsOutcome>();
  readonly queries: Array<{ from: string; server: string; name: string; qtype: string }> = [];
  /**
   * the path MTU per destination address (unset: every size up to the interface's crosses); `blackHole`: larger
   * packets vanish silently, else the hop answers "fragmentation needed" with the MTU
   */
  readonly pathMtus = new Map<string, { mtu: number; blackHole: boolean }>();
  readonly pings: Array<{ from: string; host: string; size: number }> = [];
  /** the kernel's links and routes per netns ("host" or a netns path), for the MTU audit: unset until a test calls withLinks */
  netnsLinks?: ProbeNet['netnsLinks'];

  /** turns the MTU audit on: these are the links and routes each netns has (absent: none) */
  withLinks(states: Map<string, { links: KernelLink[]; routes: KernelRoute[] }>): void {
    this.netnsLinks = async (netnsPath) => states.get(netnsPath ?? HOST) ?? { links: [], routes: [] };
  }
  private nextPort = 40000;

  constructor(private readonly world: () => FakeProbeWorld) {}

  listen(netns: string, port: number): void {
    if (!this.listening.has(netns)) this.listening.set(netns, new Set());
    this.listening.get(netns)!.add(port);
  }

  blackhole(address: string): void {
    this.blackholed.add(address);
  }

  /** a DROP for one destination port: connects to `address:port` time out, every other port still answers */
  blockPort(address: string, port: number): void {
    this.blockedPorts.add(`${address}|${port}`);
  }

  /** agents not closed yet: 0 after every probe */
  openAgents(): number {
    return this.opened.filter((a) => !a.closed).length;
  }

  async open(netnsPath: string | undefined): Promise<ProbeAgent> {
    const netns = netnsPath ?? HOST;
    const entry = { netns, closed: false };
    this.opened.push(entry);
    const mine: number[] = [];
    const agent: ProbeAgent = {
      listeners: async () => [...(this.listening.get(netns) ?? [])],
      respond: async (port, banner) => {
        const table = this.responders.get(netns) ?? new Map<number, string>();
        this.responders.set(netns, table);
        if (table.has(port) || this.listening.get(netns)?.has(port)) throw new Error(`EADDRINUSE ${port}`);
        const p = port === 0 ? this.nextPort++ : port;
        table.set(p, banner);
        mine.push(p);
        return p;
      },
      dns: async (server, _port, name, qtype) => {
        this.queries.push({ from: netns, server, name, qtype });
        if (this.blackholed.has(server)) return { kind: 'timeout' };
        return this.nameservers.get(server) ?? { kind: 'timeout' };
      },
      ping: async (host, size): Promise<PingOutcome> => {
        this.pings.push({ from: netns, host, size });
        if (this.blackholed.has(host)) return { kind: 'lost' };
        const m = this.pathMtus.get(host);
        if (!m || size <= m.mtu) return { kind: 'ok' };
        return m.blackHole ? { kind: 'lost' } : { kind: 'tooBig', mtu: m.mtu };
      },
      connect: async (host, port) => {
        const outcome = this.connect(host, port);
        this.connects.push({ from: netns, host, port, outcome });
        return outcome;
      },
      close: async () => {
        if (entry.closed) return;
        entry.closed = true;
        for (const p of mine) this.responders.get(netns)?.delete(p);
      },
    };
    return agent;
  }

  private connect(host: string, port: number): ConnectOutcome {
    if (this.blackholed.has(host) || this.blockedPorts.has(`${host}|${port}`)) return { kind: 'timeout' };
    const w = this.world();
    let target = host === '127.0.0.1' || host === '::1' ? HOST : w.addresses.get(host);
    let targetPort = port;
    if (target === HOST) {
      const dnat = this.dnat(w, host, port);
      if (dnat) ({ ns: target, port: targetPort } = dnat);
    }
    if (target === undefined) return { kind: 'timeout' };
    const banner = this.responders.get(target)?.get(targetPort);
    if (banner !== undefined) return { kind: 'connected', rttMs: 0.05, banner: banner.trim() };
    if (this.listening.get(target)?.has(targetPort)) return { kind: 'connected', rttMs: 0.05 };
    return { kind: 'refused' };
  }

  /** first CNI-HOSTPORT-DNAT jump whose chain has a matching DNAT rule, like the kernel's nat table walk */
  private dnat(w: FakeProbeWorld, host: string, port: number): { ns: string; port: number } | undefined {
    const lines = host.includes(':') ? w.nat.v6 : w.nat.v4;
    for (const jump of lines.filter((l) => l.startsWith('-A CNI-HOSTPORT-DNAT '))) {
      const ports = /--dports (\S+)/.exec(jump)?.[1]?.split(',').map(Number) ?? [];
      const chain = /-j (\S+)/.exec(jump)?.[1];
      if (!ports.includes(port) || !chain) continue;
      for (const rule of lines.filter((l) => l.startsWith(`-A ${chain} `))) {
        const d = /-d ([^/\s]+)/.exec(rule)?.[1];
        if (!rule.includes(`--dport ${port} `) || (d && d !== host)) continue;
        const dest = /--to-destination (\S+)/.exec(rule)?.[1];
        const m = dest ? /^\[?([^\]]+?)\]?:(\d+)$/.exec(dest) : null;
        const ns = m ? w.addresses.get(m[1]!) : undefined;
        if (m && ns) return { ns, port: Number(m[2]) };
      }
    }
    return undefined;
  }

  async hostportDnatRules(): Promise<{ v4: string[]; v6: string[] }> {
    const { nat } = this.world();
    return {
      v4: nat.v4.filter((l) => l.startsWith('-A CNI-HOSTPORT-DNAT ')),
      v6: nat.v6.filter((l) => l.startsWith('-A CNI-HOSTPORT-DNAT ')),
    };
  }

  async interfaceLink(netnsPath: string, ifName: string): Promise<InterfaceLink | undefined> {
    this.linkReads.push(`${netnsPath}/${ifName}`);
    return this.interfaceLinks.get(`${netnsPath}/${ifName}`);
  }

  hostAddresses(): string[] {
    return ['127.0.0.1', '::1', ...[...this.world().addresses].filter(([, ns]) => ns === HOST).map(([a]) => a)];
  }
}
