/**
 * From the kernel's links, routes, bridge ports and tc filters to the picture. Each pod link leads where the kernel
 * says it does: a veth to the peer whose ifindex it names (and which names it back), a macvlan/ipvlan/vlan to its
 * parent link, an enslaved link to its bridge/vrf; a host veth on to its bridge, to the host's routes through it to the
 * pod's addresses (ptp) and to the device its ingress is redirected to (bandwidth's ifb). Names are never matched to
 * guess a link. Owners come from the recorded CNI results (owners.ts). Pure, so it is tested on recorded output.
 */
import type { TopologyEdge, TopologyEdgeKind, TopologyNode, TopologyNodeKind, TopologyOwner } from '../../../shared/domain/topology';
import type { BridgePort, KernelFilter, KernelLink, KernelRoute } from '../kernel/types';
import type { InterfaceClaim, PodOwners } from './owners';

/** What the topology reads from the kernel, in the kernel reader's types. */
export interface RawTopology {
  host: { links: KernelLink[]; routes: KernelRoute[]; bridgePorts: BridgePort[]; ingressFilters: KernelFilter[] };
  /** netns path → its links with addresses */
  pods: Record<string, KernelLink[]>;
  errors: string[];
}

export interface PodWiring {
  sandboxId: string;
  netnsPath: string;
  owners: PodOwners;
}

export const HOST_NETNS = 'host';
const HOST_STACK_ID = 'host';

/** link kinds whose `link_index` names a parent (lower) link rather than a peer */
const CHILD_KINDS = new Set(['macvlan', 'macvtap', 'ipvlan', 'ipvtap', 'vlan']);

/** Host veths whose peer is one of these pod links (each names the other by ifindex): the ones worth a tc read. */
export function hostPeersOf(hostLinks: KernelLink[], podLinks: KernelLink[]): KernelLink[] {
  return hostLinks.filter(
    (h) =>
      h.kind === 'veth' &&
      h.peerNetnsId !== undefined &&
      podLinks.some((l) => l.kind === 'veth' && l.peerNetnsId !== undefined && l.peerIfindex === h.ifindex && h.peerIfindex === l.ifindex),
  );
}

function isHostRoute(dst: string): boolean {
  return !dst.includes('/') ? dst !== 'default' : dst.endsWith('/32') || dst.endsWith('/128');
}

export function buildTopology(raw: RawTopology, pods: PodWiring[]): { nodes: TopologyNode[]; edges: TopologyEdge[] } {
  const builder = new TopologyBuilder(raw.host);
  for (const pod of pods) builder.addPod(pod, raw.pods[pod.netnsPath] ?? []);
  return { nodes: [...builder.nodes.values()], edges: builder.edges };
}

/** one pod's links as the builder walks them */
interface PodScope {
  pod: PodWiring;
  byName: Map<string, KernelLink>;
  /** every address in the pod's netns: a host route to one of them leads to this pod */
  addresses: Set<string>;
}

/** The picture being drawn: each node once (by id), each edge once (by ends, kind and detail). */
class TopologyBuilder {
  readonly nodes = new Map<string, TopologyNode>();
  readonly edges: TopologyEdge[] = [];
  private readonly edgeKeys = new Set<string>();
  private readonly hostByIndex: Map<number, KernelLink>;
  private readonly hostByName: Map<string, KernelLink>;
  private readonly ports: Map<string, BridgePort>;

  constructor(private readonly host: RawTopology['host']) {
    this.hostByIndex = new Map(host.links.map((l) => [l.ifindex, l]));
    this.hostByName = new Map(host.links.map((l) => [l.name, l]));
    this.ports = new Map(host.bridgePorts.map((p) => [p.name, p]));
  }

  addPod(pod: PodWiring, podLinks: KernelLink[]): void {
    const scope: PodScope = {
      pod,
      byName: new Map(podLinks.map((l) => [l.name, l])),
      addresses: new Set(podLinks.flatMap((l) => l.addresses.map((a) => a.address))),
    };
    for (const l of podLinks) this.wirePodLink(scope, l);
  }

  private addEdge(from: string, to: string, kind: TopologyEdgeKind, owner?: TopologyOwner, detail?: string): void {
    const k = `${from}>${to}>${kind}>${detail ?? ''}`;
    if (this.edgeKeys.has(k)) return;
    this.edgeKeys.add(k);
    this.edges.push({ from, to, kind, ...(detail ? { detail } : {}), ...(owner ? { owner } : {}) });
  }

  private place(l: KernelLink, kind: TopologyNodeKind, id: string, netns: string, claim?: InterfaceClaim): TopologyNode {
    const existing = this.nodes.get(id);
    if (existing) return existing;
    const port = netns === HOST_NETNS ? this.ports.get(l.name) : undefined;
    const n: TopologyNode = {
      id,
      kind,
      name: l.name,
      netns,
      ifindex: l.ifindex,
      ...(l.mac !== undefined ? { mac: l.mac } : {}),
      ...(l.mtu !== undefined ? { mtu: l.mtu } : {}),
      ...(l.state !== undefined ? { state: l.state } : {}),
      adminUp: l.flags?.includes('UP') ?? false,
      ...(l.kind !== undefined ? { linkKind: l.kind } : {}),
      addresses: l.addresses.map((a) => ({ ...a })),
      ...(l.master ? { master: l.master } : {}),
      ...(port?.hairpin !== undefined ? { hairpin: port.hairpin } : {}),
      ...(port?.state !== undefined ? { portState: port.state } : {}),
      ...(l.mode !== undefined ? { mode: l.mode } : {}),
      ...(l.vlanId !== undefined ? { vlanId: l.vlanId } : {}),
      ...(claim ? { owner: claim.owner } : {}),
    };
    this.nodes.set(id, n);
    return n;
  }

  private hostStack(): string {
    if (!this.nodes.has(HOST_STACK_ID))
      this.nodes.set(HOST_STACK_ID, { id: HOST_STACK_ID, kind: 'host', name: 'host', netns: HOST_NETNS, addresses: [] });
    return HOST_STACK_ID;
  }

  private placePod(scope: PodScope, l: KernelLink): TopologyNode {
    const { pod } = scope;
    const claim = pod.owners.pod.get(l.name);
    const moved = claim?.owner.plugin === 'host-device';
    const n = this.place(l, moved ? 'host-device' : 'pod-if', `pod:${pod.sandboxId}:${l.name}`, pod.netnsPath, claim);
    n.sandboxId = pod.sandboxId;
    if (moved) {
      const device = claim?.config.device;
      const original = l.alias ?? (typeof device === 'string' ? device : undefined);
      if (original) n.originalName = original;
    }
    return n;
  }

  /** a host link a pod link leads to, and where the host link leads in turn (master, routes, redirects) */
  private placeHost(scope: PodScope, h: KernelLink, kind: TopologyNodeKind, via?: TopologyOwner): TopologyNode {
    const id = `host:${h.name}`;
    if (this.nodes.has(id)) return this.nodes.get(id)!;
    const hostClaim = (name: string) => scope.pod.owners.host.get(name);
    const claim = hostClaim(h.name);
    const n = this.place(h, kind, id, HOST_NETNS, claim);
    if (kind === 'host-veth') n.sandboxId = scope.pod.sandboxId;
    const owner = claim?.owner ?? via;
    const master = h.master ? this.hostByName.get(h.master) : undefined;
    if (master?.kind === 'bridge') {
      const b = this.placeHost(scope, master, 'bridge');
      this.addEdge(id, b.id, 'bridge-port', hostClaim(master.name)?.owner ?? owner);
      if (master.addresses.some((a) => a.scope !== 'link'))
        this.addEdge(b.id, this.hostStack(), 'host-stack', hostClaim(master.name)?.owner ?? owner);
    } else if (master) {
      const m = this.placeHost(scope, master, 'host-link');
      this.addEdge(id, m.id, master.kind === 'vrf' ? 'vrf-port' : 'master', owner);
    }
    for (const r of this.host.routes) {
      if (r.dev !== h.name || r.table === 'local' || (r.type && r.type !== 'unicast') || !isHostRoute(r.dst)) continue;
      if (!scope.addresses.has(r.dst.split('/')[0]!)) continue;
      const table = r.table === 'main' ? '' : ` table ${r.table}`;
      this.addEdge(id, this.hostStack(), 'route', owner, `${r.dst}${r.gateway ? ` via ${r.gateway}` : ''} dev ${h.name}${table}`);
    }
    for (const f of this.host.ingressFilters) {
      if (f.dev !== h.name) continue;
      for (const a of f.actions) {
        if (a.kind !== 'mirred' || a.action !== 'redirect' || !a.toDev) continue;
        const target = this.hostByName.get(a.toDev);
        if (!target) continue;
        const t = this.placeHost(scope, target, target.kind === 'ifb' ? 'ifb' : 'host-link');
        if (t.kind === 'ifb') t.sandboxId ??= scope.pod.sandboxId;
        this.addEdge(
          id,
          t.id,
          'redirect',
          hostClaim(target.name)?.owner,
          `ingress of ${h.name} → ${a.direction ?? 'egress'} of ${a.toDev}`,
        );
      }
    }
    return n;
  }

  /** a pod link, and the edge to what the kernel says it leads to: its veth peer, its parent, its master */
  private wirePodLink(scope: PodScope, l: KernelLink): void {
    const { pod, byName: podByName } = scope;
    const n = this.placePod(scope, l);
    const owner = n.kind === 'host-device' ? undefined : n.owner;
    if (l.kind === 'veth' && l.peerNetnsId !== undefined && l.peerIfindex !== undefined) {
      const peer = this.hostByIndex.get(l.peerIfindex);
      // the host end must name this link back: another netns may hold a veth with the same ifindex
      if (peer?.kind === 'veth' && peer.peerIfindex === l.ifindex && peer.peerNetnsId !== undefined) {
        this.addEdge(n.id, `host:${peer.name}`, 'veth', owner);
        this.placeHost(scope, peer, 'host-veth', owner);
      }
    } else if (l.kind === 'veth' && l.peerName) {
      const peer = podByName.get(l.peerName);
      if (peer) this.addEdge(n.id, this.placePod(scope, peer).id, 'veth', owner);
    } else if (l.kind !== undefined && CHILD_KINDS.has(l.kind)) {
      if (l.peerNetnsId !== undefined && l.peerIfindex !== undefined) this.wireHostParent(scope, l, n, owner);
      else if (l.peerName) {
        const parent = podByName.get(l.peerName);
        if (parent) this.addEdge(n.id, this.placePod(scope, parent).id, 'parent', owner, l.kind);
      }
    }
    if (l.master) {
      const m = podByName.get(l.master);
      if (m) {
        const kind: TopologyEdgeKind = m.kind === 'bridge' ? 'bridge-port' : m.kind === 'vrf' ? 'vrf-port' : 'master';
        this.addEdge(n.id, this.placePod(scope, m).id, kind, pod.owners.pod.get(m.name)?.owner ?? owner);
      }
    }
  }

  /** a macvlan/ipvlan/vlan in the pod whose parent is a host link */
  private wireHostParent(scope: PodScope, l: KernelLink, n: TopologyNode, owner: TopologyOwner | undefined): void {
    const parent = this.hostByIndex.get(l.peerIfindex!);
    // ifindexes are per namespace: the parent the plugin was told to use (macvlan/ipvlan/vlan `master`) confirms it
    const told = scope.pod.owners.pod.get(l.name)?.config.master;
    if (!parent || (typeof told === 'string' && told !== parent.name)) return;
    const detail = `${l.kind}${l.mode ? ` ${l.mode}` : ''}${l.vlanId !== undefined ? ` id ${l.vlanId}` : ''}`;
    this.addEdge(n.id, `host:${parent.name}`, 'parent', owner, detail);
    const p = this.placeHost(scope, parent, parent.kind === 'veth' && parent.peerNetnsId !== undefined ? 'host-veth' : 'host-link', owner);
    // a veth parent whose peer is also on the host (how a test lab gives macvlan a parent)
    const sibling = parent.kind === 'veth' && parent.peerName ? this.hostByName.get(parent.peerName) : undefined;
    if (sibling) this.addEdge(p.id, this.placeHost(scope, sibling, 'host-link').id, 'veth');
  }
}
