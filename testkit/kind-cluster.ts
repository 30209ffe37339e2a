/**
 * A kind-shaped cluster without Kubernetes: each node is a containerd (Debian's, through the containerd fixture) in a
 * network namespace of its own with its own hostname, optionally in its own mount namespace (its socket and its pods'
 * netns files on tmpfs only it sees, reached from the host through /proc/<pid>/root) and its own pid namespace. A
 * host bridge joins the nodes by veths (each node's side is its eth0), and every node has kindnet-style routes to
 * the other nodes' pod subnets via their node addresses. Inside each node, CNI bridge + host-local + portmap.
 *
 * Everything host-global is named from one allocator lease: the bridge, the veths, the netns names, the node link
 * (the lease's /24 and /64 number 250) and each node's pod subnets (the lease's /24 and /64 number i). stop() — and a failed
 * start — removes all of it: the nodes' containerds (and their pods, through CRI), the netns, veths and bridge.
 */
import { execFileSync } from 'node:child_process';
import { leaseHost, type HostLease } from './allocator';
import { startContainerd, type ContainerdFixture } from './containerd-fixture';

export interface KindNodeSpec {
  /** its own mount namespace, as a kind node container */
  privateMount?: boolean;
  /** its own pid namespace too (needs privateMount) */
  ownPid?: boolean;
}

export interface KindNode {
  index: number;
  /** its hostname in its UTS namespace */
  hostname: string;
  /** the netns name (ip netns) and path */
  netns: string;
  netnsPath: string;
  /** its addresses on the node link (IPv4, IPv6), and the host veth joining it to the bridge */
  address: string;
  address6: string;
  hostVeth: string;
  /** its pod subnets */
  podSubnet4: string;
  podSubnet6: string;
  privateMount: boolean;
  ownPid: boolean;
  containerd: ContainerdFixture;
}

export interface KindCluster {
  lease: HostLease;
  /** the host bridge joining the nodes and its address (the nodes' default gateway) */
  bridge: string;
  bridgeAddress: string;
  /** the node link, e.g. 10.<octet>.250.0/24 and fd00:<octet>:fa::/64 */
  linkSubnet: string;
  linkSubnet6: string;
  nodes: KindNode[];
  stop(): Promise<void>;
}

const LINK_SUBNET_INDEX = 250;

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
}

function quietly(args: string[]): void {
  try {
    ip(args);
  } catch {
    /* already gone */
  }
}

/** the n-th address of a /24 given as a.b.c.0/24 */
const hostOf = (subnet: string, n: number) => `${subnet.split('/')[0]!.split('.').slice(0, 3).join('.')}.${n}`;
/** the n-th address of a /64 given as p:q:r::/64 */
const hostOf6 = (subnet: string, n: number) => `${subnet.split('/')[0]!}${n.toString(16)}`;

/** Builds the cluster, one node per spec, in order; a failure part-way removes what was built and rethrows. */
export async function startKindCluster(specs: KindNodeSpec[]): Promise<KindCluster> {
  const lease = leaseHost('kind-cluster');
  const bridge = lease.name('kb');
  const linkSubnet = lease.subnet4(LINK_SUBNET_INDEX);
  const bridgeAddress = hostOf(linkSubnet, 1);
  const linkSubnet6 = lease.subnet6(LINK_SUBNET_INDEX);
  const nodes: KindNode[] = [];
  const made: { netns: string[]; veths: string[]; bridge: boolean } = { netns: [], veths: [], bridge: false };
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const errors: string[] = [];
    for (const n of nodes) await n.containerd.stop().catch((e: unknown) => errors.push(`${n.hostname}: ${(e as Error).message}`));
    // deleting a node's netns takes its eth0 (and so the host veth), its CNI bridge and its iptables rules with it
    for (const ns of made.netns) quietly(['netns', 'delete', ns]);
    for (const v of made.veths) quietly(['link', 'del', v]);
    if (made.bridge) quietly(['link', 'del', bridge]);
    lease.release();
    if (errors.length) throw new Error(`kind cluster stop: ${errors.join('; ')}`);
  };

  try {
    ip(['link', 'add', bridge, 'type', 'bridge']);
    made.bridge = true;
    ip(['addr', 'add', `${bridgeAddress}/24`, 'dev', bridge]);
    // nodad: an address in duplicate address detection cannot be routed via yet, and there is nothing to collide with
    ip(['-6', 'addr', 'add', `${hostOf6(linkSubnet6, 1)}/64`, 'dev', bridge, 'nodad']);
    ip(['link', 'set', bridge, 'up']);
    for (const [i, spec] of specs.entries()) {
      const netns = lease.name(`n${i}`);
      const netnsPath = `/var/run/netns/${netns}`;
      const hostVeth = lease.name(`v${i}`);
      const address = hostOf(linkSubnet, 10 + i);
      const address6 = hostOf6(linkSubnet6, 10 + i);
      ip(['netns', 'add', netns]);
      made.netns.push(netns);
      // the node's side is created in the node's netns under the lease's name, then called eth0 as in a kind node
      const inner = lease.name(`w${i}`);
      ip(['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', inner, 'netns', netns]);
      made.veths.push(hostVeth);
      ip(['link', 'set', hostVeth, 'master', bridge, 'up']);
      ip(['-n', netns, 'link', 'set', inner, 'name', 'eth0']);
      ip(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
      ip(['-n', netns, '-6', 'addr', 'add', `${address6}/64`, 'dev', 'eth0', 'nodad']);
      ip(['-n', netns, 'link', 'set', 'eth0', 'up']);
      ip(['-n', netns, 'link', 'set', 'lo', 'up']);
      ip(['-n', netns, 'route', 'add', 'default', 'via', bridgeAddress]);
      const podSubnet4 = lease.subnet4(i);
      const podSubnet6 = lease.subnet6(i);
      const hostname = lease.name(`node${i}`);
      const containerd = await startContainerd({
        bridge: lease.name(`c${i}`),
        ranges: { ipv4: podSubnet4, ipv6: podSubnet6 },
        tempPrefix: `podscope-${netns}-`,
        node: { netnsPath, hostname, privateMount: spec.privateMount, ownPid: spec.ownPid },
      });
      nodes.push({
        index: i,
        hostname,
        netns,
        netnsPath,
        address,
        address6,
        hostVeth,
        podSubnet4,
        podSubnet6,
        privateMount: spec.privateMount === true,
        ownPid: spec.ownPid === true,
        containerd,
      });
    }
    // kindnet's scheme: every node routes each other node's pod subnet via that node's address on the link
    for (const n of nodes)
      for (const other of nodes) {
        if (other === n) continue;
        ip(['-n', n.netns, 'route', 'add', other.podSubnet4, 'via', other.address]);
        ip(['-n', n.netns, '-6', 'route', 'add', other.podSubnet6, 'via', other.address6]);
      }
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
  return { lease, bridge, bridgeAddress, linkSubnet, linkSubnet6, nodes, stop };
}
