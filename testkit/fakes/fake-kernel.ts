/**
 * The host's network state as the fake CNI plugins (fake-cni-plugins.ts) leave it: links and addresses per netns,
 * host links (bridge, host veths, ifbs) with their tbf qdiscs, and portmap's nat rules. The fake live and topology
 * readers answer from it the way `ip`/`tc`/`iptables` would, so the engine's own read-back code runs over what the
 * plugins did, not over the CNI result. Tests that need a kernel that disagrees edit it (a link's addresses, a host
 * link's tbf, the nat lines) as someone on the host would.
 *
 * `commandRunner()` is the OS boundary itself: it answers the commands the engine's kernel reader runs
 * (kernel/commands.ts: `ip -d -j addr show`, `ip -j route show table all`, `tc -j qdisc show`, `iptables-save`, …)
 * with the output those tools print, so the real reader and its parsers run above it (`fakeLiveReader`).
 */
import type { LiveAddress, LiveInterface, LiveRoute } from '../../shared/domain/live';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { LinuxKernelReader } from '../../electron/engine/kernel/linux-reader';
import { KernelLiveReader, type LiveReader, type RawLiveNetwork } from '../../electron/engine/netns/live-reader';

export interface KernelOwner {
  containerId: string;
  network: string;
  ifName: string;
}

export interface FakePodLink {
  name: string;
  mac: string;
  kind: 'loopback' | 'veth';
  /** CIDR addresses, as `ip addr add` was given them */
  addresses: string[];
  routes: Array<{ dst: string; gw?: string }>;
  /** the host end of a veth */
  peer?: string;
  /** the link-local address the kernel derived (default: the EUI-64 of the MAC) */
  linkLocal?: string;
  owner: KernelOwner;
}

export interface FakeHostLink {
  name: string;
  mac: string;
  kind: 'bridge' | 'veth' | 'ifb';
  addresses: string[];
  /** the bridge a veth is enslaved to */
  master?: string;
  /** tc's view of a tbf: bytes per second and bytes */
  tbf?: { rate: number; burst: number };
  owner?: KernelOwner;
}

/** The namespace name the probe and topology readers use for the host. */
export const HOST_NS = 'host';

export class FakeKernel {
  /** netns path → links by name, in creation order */
  readonly netns = new Map<string, Map<string, FakePodLink>>();
  readonly host = new Map<string, FakeHostLink>();
  /** `iptables -t nat -S` lines per family, in the order they were added */
  readonly nat: { v4: string[]; v6: string[] } = { v4: [], v6: [] };

  podLinks(netnsPath: string): FakePodLink[] {
    return [...(this.netns.get(netnsPath)?.values() ?? [])];
  }

  addPodLink(netnsPath: string, link: FakePodLink): void {
    const links = this.netns.get(netnsPath) ?? new Map<string, FakePodLink>();
    this.netns.set(netnsPath, links);
    links.set(link.name, link);
  }

  removePodLink(netnsPath: string, name: string): FakePodLink | undefined {
    const links = this.netns.get(netnsPath);
    const link = links?.get(name);
    links?.delete(name);
    if (links?.size === 0) this.netns.delete(netnsPath);
    return link;
  }

  /** Removes every nat line that mentions `chain` (its rules and the jumps to it). */
  flushChain(chain: string): void {
    for (const family of ['v4', 'v6'] as const) {
      const keep = this.nat[family].filter((l) => !l.split(' ').includes(chain));
      this.nat[family].splice(0, this.nat[family].length, ...keep);
    }
  }

  /** What address lives in which namespace (pod addresses in their netns, host addresses on the host). */
  addressOwners(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [path, links] of this.netns)
      for (const l of links.values()) if (l.kind !== 'loopback') for (const a of l.addresses) out.set(a.split('/')[0]!, path);
    for (const l of this.host.values()) for (const a of l.addresses) out.set(a.split('/')[0]!, HOST_NS);
    return out;
  }

  /** What LinuxLiveReader would report for this netns and these host devices. */
  liveView(netnsPath: string, hostDevices: string[]): RawLiveNetwork {
    const interfaces: LiveInterface[] = [];
    const routes: LiveRoute[] = [];
    for (const link of this.podLinks(netnsPath)) {
      const isLo = link.kind === 'loopback';
      const addresses: LiveAddress[] = link.addresses.map((cidr) => {
        const [address, prefix] = cidr.split('/') as [string, string];
        return { family: address.includes(':') ? 6 : 4, address, prefixLen: Number(prefix), scope: isLo ? 'host' : 'global' };
      });
      // the kernel adds an EUI-64 link-local address to every link with a MAC
      if (!isLo) addresses.push({ family: 6, address: link.linkLocal ?? linkLocal(link.mac), prefixLen: 64, scope: 'link' });
      interfaces.push({
        name: link.name,
        ifindex: interfaces.length + 1,
        mac: link.mac,
        mtu: isLo ? 65536 : 1500,
        state: isLo ? 'UNKNOWN' : 'UP',
        kind: isLo ? undefined : 'veth',
        addresses,
      });
      if (isLo) continue;
      for (const cidr of link.addresses) {
        const [address, prefix] = cidr.split('/') as [string, string];
        if (!address.includes(':'))
          routes.push({
            family: 4,
            dst: `${v4Network(address, Number(prefix))}/${prefix}`,
            dev: link.name,
            protocol: 'kernel',
            scope: 'link',
          });
      }
      for (const r of link.routes) {
        const v6 = r.dst.includes(':');
        routes.push({
          family: v6 ? 6 : 4,
          dst: /^(0\.0\.0\.0|::)\/0$/.test(r.dst) ? 'default' : r.dst,
          gateway: r.gw,
          dev: link.name,
          ...(v6 ? { metric: 1024 } : {}),
        });
      }
    }
    const hostLinkKinds: Record<string, string> = {};
    const qdiscs: RawLiveNetwork['qdiscs'] = {};
    for (const name of hostDevices) {
      const link = this.host.get(name);
      if (!link) continue;
      hostLinkKinds[name] = link.kind;
      qdiscs[name] = link.tbf ? [{ kind: 'tbf', ...link.tbf }] : [{ kind: 'noqueue' }];
    }
    return { interfaces, routes, hostLinkKinds, qdiscs, nat: structuredClone(this.nat), errors: [] };
  }
}

/**
 * The real live reader (kernel reader, parsers, live-view assembly) over this kernel's command output: what the engine
 * runs in production, with only the `ip`/`tc`/`iptables-save` execs faked.
 */
export function fakeLiveReader(kernel: FakeKernel = new FakeKernel()): LiveReader {
  return new KernelLiveReader(new LinuxKernelReader(kernelCommandRunner(kernel)));
}

/**
 * A ProcessRunner that prints what iproute2 (`-j`), tc and the iptables save tools would print for this kernel, for the
 * commands in kernel/commands.ts. A pod netns is entered with `nsenter --net=<path>`; one the kernel holds no links
 * for answers as an empty namespace. A command it does not know exits 127, as a missing tool would.
 */
export function kernelCommandRunner(kernel: FakeKernel): ProcessRunner {
  return {
    async run(req: ExecRequest): Promise<ExecResult> {
      let args = [req.file, ...(req.args ?? [])];
      let netns: string | undefined;
      if (args[0] === 'nsenter' && args[1]?.startsWith('--net=')) {
        netns = args[1].slice('--net='.length);
        args = args.slice(2);
      }
      const out = (stdout: string, exitCode = 0, stderr = ''): ExecResult => ({
        command: [req.file, ...(req.args ?? [])].join(' '),
        exitCode,
        signal: null,
        stdout,
        stderr,
        durationMs: 0,
        timedOut: false,
        canceled: false,
      });
      if (req.signal?.aborted) return { ...out('', 1), exitCode: null, canceled: true };
      const [tool, ...rest] = args;
      const line = rest.join(' ');
      if (tool === 'ip' && line === '-d -j addr show') return out(JSON.stringify(ipLinks(kernel, netns)));
      const route = /^-j -([46]) route show table all$/.exec(line);
      if (tool === 'ip' && route) return out(JSON.stringify(ipRoutes(kernel, netns, Number(route[1]) as 4 | 6)));
      if (tool === 'ip' && /^-j -[46] rule show$/.test(line)) return out('[]');
      const qdisc = /^-j qdisc show(?: dev (\S+))?$/.exec(line);
      if (tool === 'tc' && qdisc) {
        const dev = qdisc[1];
        if (netns !== undefined) return out('[]');
        if (dev !== undefined && !kernel.host.has(dev)) return out('', 1, `Cannot find device "${dev}"\n`);
        return out(JSON.stringify(tcQdiscs(kernel, dev)));
      }
      if (tool === 'bridge' && line === '-d -j link show') return out(JSON.stringify(netns === undefined ? bridgePorts(kernel) : []));
      if ((tool === 'iptables-save' || tool === 'ip6tables-save') && (line === '' || line === '-t nat'))
        return out(netns === undefined ? natSave(kernel.nat[tool === 'iptables-save' ? 'v4' : 'v6']) : '');
      if (tool === 'iptables-save' || tool === 'ip6tables-save') return out('');
      return out('', 127, `${tool ?? ''}: not faked by FakeKernel\n`);
    },
  };
}

/** `ip -d -j addr show`: the pod's links from the live view, or the host's links with their kind and master. */
function ipLinks(kernel: FakeKernel, netns: string | undefined): object[] {
  if (netns !== undefined) {
    return kernel.liveView(netns, []).interfaces.map((i) => ({
      ifindex: i.ifindex,
      ifname: i.name,
      flags: i.state === 'UP' ? ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'] : ['LOOPBACK', 'UP', 'LOWER_UP'],
      mtu: i.mtu,
      operstate: i.state,
      address: i.mac,
      ...(i.kind !== undefined && { linkinfo: { info_kind: i.kind } }),
      addr_info: i.addresses.map((a) => ({
        family: a.family === 6 ? 'inet6' : 'inet',
        local: a.address,
        prefixlen: a.prefixLen,
        scope: a.scope,
      })),
    }));
  }
  return [...kernel.host.values()].map((l, i) => ({
    ifindex: i + 2,
    ifname: l.name,
    flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
    mtu: 1500,
    operstate: 'UP',
    address: l.mac,
    ...(l.master !== undefined && { master: l.master }),
    linkinfo: { info_kind: l.kind, ...(l.master !== undefined && { info_slave_kind: 'bridge' }) },
    addr_info: l.addresses.map((cidr) => {
      const [local, prefix] = cidr.split('/') as [string, string];
      return { family: local.includes(':') ? 'inet6' : 'inet', local, prefixlen: Number(prefix), scope: 'global' };
    }),
  }));
}

/** `ip -j -4|-6 route show table all`, main table only (the fake keeps no local table): no `table` key, as ip prints it. */
function ipRoutes(kernel: FakeKernel, netns: string | undefined, family: 4 | 6): object[] {
  if (netns === undefined) return [];
  return kernel
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
function tcQdiscs(kernel: FakeKernel, dev: string | undefined): object[] {
  const links = dev === undefined ? [...kernel.host.values()] : [kernel.host.get(dev)!];
  return links.map((l) => ({
    kind: l.tbf ? 'tbf' : 'noqueue',
    handle: l.tbf ? '8001:' : '0:',
    ...(dev === undefined && { dev: l.name }),
    root: true,
    refcnt: 2,
    options: l.tbf ? { rate: l.tbf.rate, burst: l.tbf.burst, lat: 50_000 } : {},
  }));
}

function bridgePorts(kernel: FakeKernel): object[] {
  return [...kernel.host.values()]
    .filter((l) => l.master !== undefined)
    .map((l, i) => ({ ifindex: i + 2, ifname: l.name, master: l.master, state: 'forwarding', hairpin: true }));
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

/** The EUI-64 link-local address the kernel derives from a MAC. */
function linkLocal(mac: string): string {
  const b = mac.split(':').map((x) => Number.parseInt(x, 16));
  b[0]! ^= 0x02;
  const words = [(b[0]! << 8) | b[1]!, (b[2]! << 8) | 0xff, (0xfe << 8) | b[3]!, (b[4]! << 8) | b[5]!];
  return `fe80::${words.map((w) => w.toString(16)).join(':')}`;
}

function v4Network(address: string, prefix: number): string {
  const n = address.split('.').reduce((acc, o) => (acc << 8) | Number(o), 0) >>> 0;
  const masked = prefix === 0 ? 0 : (n & (~0 << (32 - prefix))) >>> 0;
  return [24, 16, 8, 0].map((s) => (masked >>> s) & 255).join('.');
}
