/**
 * The topology's raw read: links with addresses on the host and inside each netns, and the host's bridge ports, in
 * iproute2's JSON shapes (`ip -d -j addr`, `bridge -d -j link`). build.ts interprets it.
 */
import type { KernelLink, KernelReader } from '../kernel/types';

export interface IpLinkJson {
  ifindex: number;
  ifname: string;
  flags?: string[];
  mtu?: number;
  operstate?: string;
  address?: string;
  master?: string;
  /** the peer's ifindex (veth), in the other namespace when link_netnsid is set */
  link_index?: number;
  link?: string;
  link_netnsid?: number;
  linkinfo?: { info_kind?: string; info_slave_kind?: string };
  addr_info?: Array<{ family: string; local: string; prefixlen: number; scope?: string }>;
}

export interface BridgeLinkJson {
  ifindex: number;
  ifname: string;
  master?: string;
  state?: string;
  hairpin?: boolean;
}

export interface RawTopology {
  host: IpLinkJson[];
  bridgePorts: BridgeLinkJson[];
  /** netns path → its links with addresses */
  pods: Record<string, IpLinkJson[]>;
  errors: string[];
}

export interface TopologyReader {
  read(netnsPaths: string[], signal?: AbortSignal): Promise<RawTopology>;
}

/** The topology's read over the kernel reader: links and bridge ports on the host, links in each netns, at once. */
export class KernelTopologyReader implements TopologyReader {
  constructor(private readonly kernel: KernelReader) {}

  async read(netnsPaths: string[], signal?: AbortSignal): Promise<RawTopology> {
    const [host, ...pods] = await Promise.all([
      this.kernel.read(undefined, { links: true, bridgePorts: true }, { signal }),
      ...netnsPaths.map((p) => this.kernel.read(p, { links: true }, { signal })),
    ]);
    return {
      host: host.links.map(ipLinkJson),
      bridgePorts: host.bridgePorts.map((p) => ({
        ifindex: p.ifindex,
        ifname: p.name,
        master: p.master,
        state: p.state,
        hairpin: p.hairpin,
      })),
      pods: Object.fromEntries(netnsPaths.map((p, i) => [p, pods[i]!.links.map(ipLinkJson)])),
      errors: [host, ...pods].flatMap((s) => s.errors),
    };
  }
}

/** back to iproute2's field names, which build.ts (and the captured output its tests use) speak */
function ipLinkJson(l: KernelLink): IpLinkJson {
  const linkinfo = l.kind !== undefined || l.slaveKind !== undefined ? { info_kind: l.kind, info_slave_kind: l.slaveKind } : undefined;
  return {
    ifindex: l.ifindex,
    ifname: l.name,
    flags: l.flags,
    mtu: l.mtu,
    operstate: l.state,
    address: l.mac,
    master: l.master,
    link_index: l.peerIfindex,
    link: l.peerName,
    link_netnsid: l.peerNetnsId,
    linkinfo,
    addr_info: l.addresses.map((a) => ({
      family: a.family === 6 ? 'inet6' : 'inet',
      local: a.address,
      prefixlen: a.prefixLen,
      scope: a.scope,
    })),
  };
}
