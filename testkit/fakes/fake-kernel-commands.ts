/**
 * The FakeKernel behind the commands the kernel reader runs (kernel/commands.ts): a ProcessRunner that answers
 * `ip -d -j addr show`, `ip -j -4|-6 route show table all`, `ip -j -4|-6 rule show`, `bridge -d -j link show`,
 * `tc -j qdisc show [dev X]`, `tc -j filter show dev <dev> ingress` and `iptables-save`/`ip6tables-save` (on the host or
 * through `nsenter --net=<netns>`) with what iproute2 6.1 and iptables 1.8.9 print, built from what the fake CNI
 * plugins left. It is the one fake of that OS boundary: the engine's own LinuxKernelReader and everything above it (the
 * live view, topology) run unchanged over it. A command it does not know exits 127, as a missing tool would.
 *
 * Ifindexes follow the kernel's habits: per namespace, lo is 1; a pod's links are numbered in creation order (as the
 * fake live view numbers them), a host link keeps the number it got when first seen. A veth end names its peer by
 * ifindex and the peer's netns id (the host is id 0 to a pod; each pod gets an id on the host when first seen).
 */
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { LinuxKernelReader } from '../../electron/engine/kernel/linux-reader';
import { KernelLiveReader, type LiveReader } from '../../electron/engine/netns/live-reader';
import { FakeKernel, type FakeHostLink, type FakePodLink } from './fake-kernel';

type Json = Record<string, unknown>;

/** The EUI-64 link-local address the kernel derives from a MAC. */
function linkLocal(mac: string): string {
  const b = mac.split(':').map((x) => Number.parseInt(x, 16));
  b[0]! ^= 0x02;
  const words = [(b[0]! << 8) | b[1]!, (b[2]! << 8) | 0xff, (0xfe << 8) | b[3]!, (b[4]! << 8) | b[5]!];
  return `fe80::${words.map((w) => w.toString(16)).join(':')}`;
}

function addrInfo(cidrs: string[], mac: string | undefined, scope: string, linkLocalAddress?: string): Json[] {
  const out: Json[] = cidrs.map((cidr) => {
    const [local, prefix] = cidr.split('/') as [string, string];
    return { family: local.includes(':') ? 'inet6' : 'inet', local, prefixlen: Number(prefix), scope };
  });
  if (mac) out.push({ family: 'inet6', local: linkLocalAddress ?? linkLocal(mac), prefixlen: 64, scope: 'link' });
  return out;
}

const LO: Json = {
  ifindex: 1,
  ifname: 'lo',
  flags: ['LOOPBACK', 'UP', 'LOWER_UP'],
  mtu: 65536,
  operstate: 'UNKNOWN',
  address: '00:00:00:00:00:00',
  addr_info: addrInfo(['127.0.0.1/8', '::1/128'], undefined, 'host'),
};

export class FakeKernelCommands implements ProcessRunner {
  private readonly hostIndex = new WeakMap<FakeHostLink, number>();
  private nextHostIndex = 2;
  private readonly nsIds = new Map<string, number>();
  /** every command line it was asked, in order */
  readonly ran: string[] = [];

  constructor(private readonly kernel: FakeKernel) {}

  async run(req: ExecRequest): Promise<ExecResult> {
    const args = req.args ?? [];
    const netns = req.file === 'nsenter' ? args[0]?.replace(/^--net=/, '') : undefined;
    const [file, ...rest] = netns !== undefined ? args.slice(1) : [req.file, ...args];
    const line = [file, ...rest].join(' ');
    this.ran.push(netns !== undefined ? `[${netns}] ${line}` : line);
    const result = (stdout: string, exitCode = 0, stderr = ''): ExecResult => ({
      command: line,
      exitCode,
      signal: null,
      stdout,
      stderr,
      durationMs: 0,
      timedOut: false,
      canceled: false,
    });
    if (req.signal?.aborted) return { ...result('', 1), exitCode: null, canceled: true };
    const answer = this.answer(file ?? '', rest.join(' '), netns);
    if (answer === undefined) return result('', 127, `${file ?? ''}: not faked by FakeKernelCommands: ${line}\n`);
    return typeof answer === 'string' ? result(answer) : result(answer.stdout, answer.exitCode, answer.stderr);
  }

  private answer(
    tool: string,
    line: string,
    netns: string | undefined,
  ): string | { stdout: string; exitCode: number; stderr: string } | undefined {
    const json = (v: unknown) => JSON.stringify(v);
    if (tool === 'ip' && line === '-d -j addr show') return json(netns === undefined ? this.hostLinks() : this.podLinks(netns));
    const route = /^-j -([46]) route show table all$/.exec(line);
    if (tool === 'ip' && route) return json(netns === undefined ? [] : this.podRoutes(netns, Number(route[1]) as 4 | 6));
    if (tool === 'ip' && /^-j -[46] rule show$/.test(line)) return '[]';
    if (tool === 'bridge' && line === '-d -j link show') return json(netns === undefined ? this.bridgePorts() : []);
    const qdisc = /^-j qdisc show(?: dev (\S+))?$/.exec(line);
    if (tool === 'tc' && qdisc) {
      const dev = qdisc[1];
      if (netns !== undefined) return '[]';
      if (dev !== undefined && !this.kernel.host.has(dev)) return { stdout: '', exitCode: 1, stderr: `Cannot find device "${dev}"\n` };
      return json(this.qdiscs(dev));
    }
    const filter = /^-j filter show dev (\S+) ingress$/.exec(line);
    if (tool === 'tc' && filter) return json(netns === undefined ? this.ingressFilters(filter[1]!) : []);
    if (tool === 'iptables-save' || tool === 'ip6tables-save') {
      if (netns !== undefined || (line !== '' && line !== '-t nat')) return '';
      return natSave(this.kernel.nat[tool === 'iptables-save' ? 'v4' : 'v6']);
    }
    return undefined;
  }

  private hostIfindex(l: FakeHostLink): number {
    let i = this.hostIndex.get(l);
    if (i === undefined) {
      i = this.nextHostIndex++;
      this.hostIndex.set(l, i);
    }
    return i;
  }

  private nsId(path: string): number {
    let id = this.nsIds.get(path);
    if (id === undefined) {
      id = this.nsIds.size;
      this.nsIds.set(path, id);
    }
    return id;
  }

  /** the pod link whose host end is this veth, with its netns and its ifindex there */
  private podEnd(hostName: string): { netns: string; link: FakePodLink; ifindex: number } | undefined {
    for (const [netns, links] of this.kernel.netns) {
      const list = [...links.values()];
      const i = list.findIndex((l) => l.peer === hostName);
      if (i >= 0) return { netns, link: list[i]!, ifindex: i + 1 };
    }
    return undefined;
  }

  private hostLinks(): Json[] {
    const out: Json[] = [LO];
    for (const l of this.kernel.host.values()) {
      const pod = l.kind === 'veth' ? this.podEnd(l.name) : undefined;
      out.push({
        ifindex: this.hostIfindex(l),
        ...(pod ? { link_index: pod.ifindex, link_netnsid: this.nsId(pod.netns) } : {}),
        ifname: l.name,
        flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
        mtu: 1500,
        operstate: l.kind === 'ifb' ? 'UNKNOWN' : 'UP',
        ...(l.master ? { master: l.master } : {}),
        address: l.mac,
        linkinfo: { info_kind: l.kind, ...(l.master ? { info_slave_kind: 'bridge', info_slave_data: { hairpin: true } } : {}) },
        addr_info: addrInfo(l.addresses, l.mac, 'global'),
      });
    }
    return out;
  }

  private podLinks(netns: string): Json[] {
    return this.kernel.podLinks(netns).map((l, i) => {
      const isLo = l.kind === 'loopback';
      const peer = l.peer ? this.kernel.host.get(l.peer) : undefined;
      return {
        ifindex: i + 1,
        ...(peer ? { link_index: this.hostIfindex(peer), link_netnsid: 0 } : {}),
        ifname: l.name,
        flags: isLo ? ['LOOPBACK', 'UP', 'LOWER_UP'] : ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
        mtu: l.mtu ?? (isLo ? 65536 : 1500),
        operstate: isLo ? 'UNKNOWN' : 'UP',
        address: l.mac,
        ...(isLo ? {} : { linkinfo: { info_kind: 'veth' } }),
        addr_info: addrInfo(l.addresses, isLo ? undefined : l.mac, isLo ? 'host' : 'global', l.linkLocal),
      };
    });
  }

  /** `ip -j -4|-6 route show table all` in a pod: its main table only (the fake keeps no local table), no `table` key. */
  private podRoutes(netns: string, family: 4 | 6): Json[] {
    return this.kernel
      .liveView(netns, [])
      .routes.filter((r) => r.family === family)
      .map((r) => ({
        dst: r.dst,
        ...(r.gateway !== undefined && { gateway: r.gateway }),
        dev: r.dev,
        ...(r.protocol !== undefined && { protocol: r.protocol }),
        ...(r.scope !== undefined && { scope: r.scope }),
        ...(r.metric !== undefined && { metric: r.metric }),
        flags: [],
      }));
  }

  /** `tc -j qdisc show [dev X]`: a tbf where the bandwidth plugin set one, noqueue elsewhere; asked for one device, tc leaves `dev` out. */
  private qdiscs(dev: string | undefined): Json[] {
    const links = dev === undefined ? [...this.kernel.host.values()] : [this.kernel.host.get(dev)!];
    return links.map((l) => ({
      kind: l.tbf ? 'tbf' : 'noqueue',
      handle: l.tbf ? '8001:' : '0:',
      ...(dev === undefined && { dev: l.name }),
      root: true,
      refcnt: 2,
      options: l.tbf ? { rate: l.tbf.rate, burst: l.tbf.burst, lat: 50_000 } : {},
    }));
  }

  private bridgePorts(): Json[] {
    return [...this.kernel.host.values()]
      .filter((l) => l.master)
      .map((l) => ({ ifindex: this.hostIfindex(l), ifname: l.name, master: l.master, state: 'forwarding', hairpin: true }));
  }

  /**
   * The fake bandwidth plugin records no filter, only the ifb it made for a pod interface: the redirect is the one the
   * real plugin installs, from that interface's host veth to the ifb of the same owner.
   */
  private ingressFilters(dev: string): Json[] {
    const veth = this.kernel.host.get(dev);
    if (!veth) return [];
    const pod = this.podEnd(dev);
    const owner = pod?.link.owner;
    const ifb = [...this.kernel.host.values()].find(
      (l) =>
        l.kind === 'ifb' &&
        owner &&
        l.owner?.containerId === owner.containerId &&
        l.owner.network === owner.network &&
        l.owner.ifName === owner.ifName,
    );
    if (!ifb) return [];
    return [
      { parent: 'ffff:', protocol: 'all', pref: 1, kind: 'u32', chain: 0 },
      {
        parent: 'ffff:',
        protocol: 'all',
        pref: 1,
        kind: 'u32',
        chain: 0,
        options: {
          fh: '800::800',
          actions: [{ order: 1, kind: 'mirred', mirred_action: 'redirect', direction: 'egress', to_dev: ifb.name }],
        },
      },
    ];
  }
}

/** An `iptables-save -t nat` of the rules portmap added: built-in chains ACCEPT, every chain a rule uses or jumps to declared. */
function natSave(lines: string[]): string {
  const builtin = ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'];
  const chains = new Set<string>();
  for (const l of lines) {
    const [, chain, ...rest] = l.split(' ');
    if (chain !== undefined && !builtin.includes(chain)) chains.add(chain);
    const j = rest.indexOf('-j');
    const target = j >= 0 ? rest[j + 1] : undefined;
    if (target !== undefined && /^CNI-/.test(target)) chains.add(target);
  }
  return ['*nat', ...builtin.map((c) => `:${c} ACCEPT [0:0]`), ...[...chains].map((c) => `:${c} - [0:0]`), ...lines, 'COMMIT', ''].join(
    '\n',
  );
}

/**
 * The real live reader (kernel reader, parsers, live-view assembly) over this kernel's command output: what the engine
 * runs in production, with only the `ip`/`tc`/`iptables-save` execs faked.
 */
export function fakeLiveReader(kernel: FakeKernel = new FakeKernel(), commands = new FakeKernelCommands(kernel)): LiveReader {
  return new KernelLiveReader(new LinuxKernelReader(commands));
}
