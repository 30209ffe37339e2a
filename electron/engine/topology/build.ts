/**
 * From raw `ip -j` / `bridge -j` reads to the picture: each pod interface, its veth peer on the host (matched by
 * the peer ifindex the kernel reports, not by name), the bridge that peer is a port of, the ifb the bandwidth plugin
 * tied to the pod, and the host stack. Pure, so it is tested on captured kernel output.
 */
import type { TopologyAddress, TopologyEdge, TopologyNode, TopologyNodeKind } from '../../../shared/domain/topology';
import type { IpLinkJson, RawTopology } from './reader';

export interface PodWiring {
  sandboxId: string;
  netnsPath: string;
  /** host-side interface names the CNI result lists (veth, ifb, bridge): how an ifb is tied to its pod */
  hostInterfaces: string[];
}

function node(l: IpLinkJson, kind: TopologyNodeKind, key: string, extra: Partial<TopologyNode> = {}): TopologyNode {
  return {
    key,
    kind,
    name: l.ifname,
    namespace: kind === 'pod-if' ? 'pod' : 'host',
    ifindex: l.ifindex,
    mac: l.address,
    mtu: l.mtu,
    state: l.operstate,
    adminUp: l.flags?.includes('UP'),
    linkKind: l.linkinfo?.info_kind,
    addresses: (l.addr_info ?? []).map((a): TopologyAddress => ({
      family: a.family === 'inet6' ? 6 : 4,
      address: a.local,
      prefixLen: a.prefixlen,
      scope: a.scope,
    })),
    ...(l.master ? { master: l.master } : {}),
    ...extra,
  };
}

export function buildTopology(raw: RawTopology, pods: PodWiring[]): { nodes: TopologyNode[]; edges: TopologyEdge[] } {
  const nodes = new Map<string, TopologyNode>();
  const edges: TopologyEdge[] = [];
  const edgeKeys = new Set<string>();
  const addEdge = (e: TopologyEdge) => {
    const k = `${e.from}>${e.to}`;
    if (edgeKeys.has(k)) return;
    edgeKeys.add(k);
    edges.push(e);
  };
  const hostByIndex = new Map(raw.host.map((l) => [l.ifindex, l]));
  const hostByName = new Map(raw.host.map((l) => [l.ifname, l]));
  const ports = new Map(raw.bridgePorts.map((p) => [p.ifname, p]));
  const hostNode = (l: IpLinkJson, kind: TopologyNodeKind): TopologyNode => {
    const key = `host:${l.ifname}`;
    const existing = nodes.get(key);
    if (existing) return existing;
    const port = ports.get(l.ifname);
    const n = node(l, kind, key, port ? { hairpin: port.hairpin, portState: port.state } : {});
    nodes.set(key, n);
    return n;
  };
  let hostStack: TopologyNode | undefined;
  for (const pod of pods) {
    for (const l of raw.pods[pod.netnsPath] ?? []) {
      const podNode = node(l, 'pod-if', `pod:${pod.sandboxId}:${l.ifname}`, { sandboxId: pod.sandboxId });
      nodes.set(podNode.key, podNode);
      if (l.linkinfo?.info_kind !== 'veth' || l.link_index === undefined) continue;
      const peer = hostByIndex.get(l.link_index);
      if (!peer) continue;
      const veth = hostNode(peer, 'host-veth');
      veth.sandboxId = pod.sandboxId;
      addEdge({ from: podNode.key, to: veth.key, kind: 'veth' });
      const bridgeLink = peer.master ? hostByName.get(peer.master) : undefined;
      if (bridgeLink) {
        const bridge = hostNode(bridgeLink, 'bridge');
        addEdge({ from: veth.key, to: bridge.key, kind: 'bridge-port' });
        hostStack ??= { key: 'host', kind: 'host', name: 'host', namespace: 'host', addresses: [] };
        nodes.set('host', hostStack);
        addEdge({ from: bridge.key, to: 'host', kind: 'host-stack' });
      }
      // the bandwidth plugin redirects the veth's ingress to an ifb it names in the CNI result
      for (const name of pod.hostInterfaces) {
        const ifb = hostByName.get(name);
        if (ifb?.linkinfo?.info_kind !== 'ifb') continue;
        const n = hostNode(ifb, 'ifb');
        n.sandboxId = pod.sandboxId;
        addEdge({ from: veth.key, to: n.key, kind: 'ifb-redirect' });
      }
    }
  }
  return { nodes: [...nodes.values()], edges };
}
