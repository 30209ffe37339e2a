/**
 * The host's network state as the fake CNI plugins (fake-cni-plugins.ts) leave it: links and addresses per netns,
 * host links (bridge, host veths, ifbs) with their tbf qdiscs, and portmap's nat rules. The fake live and topology
 * readers answer from it the way `ip`/`tc`/`iptables` would, so the engine's own read-back code runs over what the
 * plugins did, not over the CNI result. Tests that need a kernel that disagrees edit it (a link's addresses, a host
 * link's tbf, the nat lines) as someone on the host would.
 *
 * `FakeKernelCommands` (fake-kernel-commands.ts) is the OS boundary itself: it answers the commands the engine's kernel
 * reader runs with the output those tools print, so the real readers and their parsers run above it.
 */
import type { LiveAddress, LiveInterface, LiveRoute } from '../../shared/domain/live';
import type { RawLiveNetwork } from '../../electron/engine/netns/live-reader';

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
  /** default 1500 (65536 for lo), as the kernel gives a new link */
  mtu?: number;
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
        mtu: link.mtu ?? (isLo ? 65536 : 1500),
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
