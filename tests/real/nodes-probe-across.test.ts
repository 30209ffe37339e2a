/**
 * Probing across the nodes of a kind-shaped cluster (three containerd nodes, each in its own netns; one also in its own
 * mount and pid namespaces, one in its own mount namespace), through `podscope probe` as a user runs it:
 * - a node's own pods are measured from that node's netns (`--endpoint` of the hidden node, traced there);
 * - `--all-nodes` and `--matrix`: every path between nodes reachable, each naming both nodes (the pod paths in both
 *   families: the cluster is dual-stack, with kindnet's routes for each);
 * - a kindnet route removed on one node (IPv4 and IPv6): the paths through it fail, and the trace names the route
 *   missing on that node, in its family;
 * - a DROP in the destination node's FORWARD chain: named there, with no owner;
 * - a node's link set below its pods' MTU: the paths into it an MTU black hole naming that node's eth0, the paths out
 *   of it the smaller MTU with PMTU discovery working (shown, not failed);
 * - `topology --all-nodes`: the hidden node's pod read on its node (its veth and bridge in the node's netns);
 * - nothing of any node changed by all of it (netfilter, routes, CNI cache, tracefs, processes in its namespaces).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cniCacheOf, inNetns, netfilterOf, processesIn, tracefsInstances } from '../../testkit/netns-snapshot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeMatrix } from '../../shared/domain/nodes';
import type { ProbePath, ProbeReport } from '../../shared/domain/probe';
import type { PodTopology } from '../../shared/domain/topology';
import { startKindCluster, type KindCluster, type KindNode } from '../../testkit/kind-cluster';
import { podscope } from './helpers/podscope-cli';

let cluster: KindCluster | undefined;
/** one pod per node, with a host port of the cluster's lease */
const pods: Array<{ id: string; node: KindNode; hostPort: number }> = [];
let before: Record<string, unknown> = {};

beforeAll(async () => {
  cluster = await startKindCluster([{}, { privateMount: true, ownPid: true }, { privateMount: true }]);
  for (const n of cluster.nodes) {
    const name = `across-${n.index}`;
    const hostPort = cluster.lease.port(n.index);
    const config = {
      metadata: { name, namespace: 'across', uid: name, attempt: 0 },
      hostname: name,
      port_mappings: [{ protocol: 0, container_port: 8080, host_port: hostPort }],
      // a resolv.conf naming no nameserver: without dns_config (or with an empty one) containerd 1.6 copies this
      // host's, whose nameserver the pods may not reach, and every probe here would fail on DNS, which these paths
      // are not about
      dns_config: { servers: [], searches: [], options: ['ndots:1'] },
    };
    pods.push({ id: (await n.containerd.api.run({ config })).id, node: n, hostPort });
  }
  // the DROP test's rule makes iptables create the filter table in that node's netns, which outlives the rule: made
  // here, before the snapshot, so only what the measurements leave is compared
  const dst = cluster.nodes[2]!;
  for (const op of ['-A', '-D']) execFileSync('nsenter', [`--net=${dst.netnsPath}`, 'iptables', op, 'FORWARD', '-j', 'ACCEPT']);
  before = await clusterSnapshot();
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
});

const nodeName = (i: number) => cluster!.nodes[i]!.hostname;
const ok = (p: ProbePath) => p.verdict === 'reachable';

describe('probe across the nodes of a kind-shaped cluster', () => {
  it("probe --endpoint of a node in its own mount and pid namespaces: its pod measured from the node's netns, traced there", async () => {
    const pod = pods[1]!;
    const r = await podscope('probe', '--endpoint', pod.node.containerd.socketPath, '--trace', '-o', 'json', pod.id);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as ProbeReport;
    // the host port at the node's loopback and its bridge's gateway, and the gateway: all in the node's netns
    expect(report.paths.filter((p) => p.kind === 'hostPort' && ok(p)).map((p) => p.to)).toContain(`127.0.0.1:${pod.hostPort}`);
    expect(report.paths.some((p) => p.kind === 'gateway' && ok(p))).toBe(true);
    const steps = report.paths.flatMap((p) => p.trace?.steps ?? []);
    expect(steps.length).toBeGreaterThan(0);
    expect(new Set(steps.map((s) => s.node))).toEqual(new Set([pod.node.hostname]));
    // portmap's DNAT rule was met in the node's netns, owned by this pod
    expect(steps).toContainEqual(
      expect.objectContaining({ kind: 'netfilter', netns: 'host', owner: expect.objectContaining({ sandboxId: pod.id }) }),
    );
  });

  it('probe --all-nodes: pod → pod both ways, other nodes’ host ports at their addresses, node → pod; all reachable, naming both nodes', async () => {
    const r = await podscope('probe', '--all-nodes', '-o', 'json', pods[0]!.id);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as ProbeReport;
    expect(report.node).toBe(nodeName(0));
    expect(report.nodes).toEqual(expect.arrayContaining([nodeName(0), nodeName(1), nodeName(2)]));
    const across = report.paths.filter((p) => p.fromNode !== p.toNode);
    for (const other of [1, 2]) {
      const them = nodeName(other);
      const addr = cluster!.nodes[other]!.address;
      expect(across).toContainEqual(
        expect.objectContaining({ kind: 'peer', fromNode: nodeName(0), toNode: them, verdict: 'reachable', answeredBy: pods[other]!.id }),
      );
      expect(across).toContainEqual(
        expect.objectContaining({ kind: 'peer', fromNode: them, toNode: nodeName(0), verdict: 'reachable', answeredBy: pods[0]!.id }),
      );
      expect(across).toContainEqual(
        expect.objectContaining({
          kind: 'hostPort',
          to: `${addr}:${pods[other]!.hostPort}`,
          toNode: them,
          verdict: 'reachable',
          answeredBy: pods[other]!.id,
        }),
      );
      expect(across).toContainEqual(
        expect.objectContaining({ kind: 'podPort', from: `node ${them}`, fromNode: them, verdict: 'reachable' }),
      );
      // dual stack: the pod paths over IPv6 too, each way, by kindnet's IPv6 routes
      for (const [from, to, answeredBy] of [
        [nodeName(0), them, pods[other]!.id],
        [them, nodeName(0), pods[0]!.id],
      ])
        expect(across).toContainEqual(
          expect.objectContaining({ kind: 'peer', family: 6, fromNode: from, toNode: to, verdict: 'reachable', answeredBy }),
        );
    }
    expect(across.filter((p) => !ok(p))).toEqual([]);
  });

  it('probe --matrix --all-nodes: every pod × every pod, grouped by node, all reachable', async () => {
    const r = await podscope('probe', '--matrix', '--all-nodes', '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(r.stdout) as ProbeMatrix;
    const ours = new Set(pods.map((p) => p.id));
    const cells = m.cells.filter((c) => ours.has(c.from) && ours.has(c.to));
    expect(cells).toHaveLength(6);
    expect(cells.every((c) => c.verdict === 'reachable')).toBe(true);
    expect(m.pods.filter((p) => ours.has(p.id)).map((p) => p.node)).toEqual([nodeName(0), nodeName(1), nodeName(2)]);
  });

  it('a kindnet route removed on one node: the paths through it fail, and the trace names the route missing on that node', async () => {
    const [a, b] = [cluster!.nodes[0]!, cluster!.nodes[1]!];
    execFileSync('ip', ['-n', a.netns, 'route', 'del', b.podSubnet4]);
    execFileSync('ip', ['-n', a.netns, '-6', 'route', 'del', b.podSubnet6]);
    try {
      const r = await podscope('probe', '--all-nodes', '--trace', '-o', 'json', pods[0]!.id);
      expect(r.code).toBe(5);
      const report = JSON.parse(r.stdout) as ProbeReport;
      const out = report.paths.find((p) => p.kind === 'peer' && p.fromNode === a.hostname && p.toNode === b.hostname)!;
      expect(out.verdict).not.toBe('reachable');
      expect(out.why).toContain(`node ${a.hostname} has no route to ${b.podSubnet4}`);
      const deciding = out.trace!.steps.find((s) => s.decisive)!;
      expect(deciding).toMatchObject({ kind: 'route', verdict: 'missing', node: a.hostname, netns: `node:${a.hostname}` });
      // the other way the SYN arrives, and node a cannot route the answer back: named on a too, for the reply
      const back = report.paths.find((p) => p.kind === 'peer' && p.fromNode === b.hostname && p.toNode === a.hostname)!;
      expect(back.verdict).not.toBe('reachable');
      expect(back.trace!.steps.find((s) => s.decisive)).toMatchObject({ kind: 'route', node: a.hostname, reply: true });
      // the IPv6 route gone too: its paths name the IPv6 subnet and the other node's IPv6 address
      const out6 = report.paths.find((p) => p.kind === 'peer' && p.family === 6 && p.fromNode === a.hostname && p.toNode === b.hostname)!;
      expect(out6.verdict).not.toBe('reachable');
      expect(out6.why).toContain(`node ${a.hostname} has no route to ${b.podSubnet6} (node ${b.hostname}'s pods) via ${b.address6}`);
      expect(out6.trace!.steps.find((s) => s.decisive)).toMatchObject({ kind: 'route', verdict: 'missing', node: a.hostname, family: 6 });
      // the third node is untouched
      const third = report.paths.filter((p) => p.toNode === nodeName(2) || p.fromNode === nodeName(2));
      expect(third.length).toBeGreaterThan(0);
      expect(third.filter((p) => !ok(p))).toEqual([]);
    } finally {
      execFileSync('ip', ['-n', a.netns, 'route', 'add', b.podSubnet4, 'via', b.address]);
      execFileSync('ip', ['-n', a.netns, '-6', 'route', 'add', b.podSubnet6, 'via', b.address6]);
    }
  });

  it("a DROP in the destination node's FORWARD chain: named there, with no owner", async () => {
    const [src, dst] = [cluster!.nodes[1]!, cluster!.nodes[2]!];
    const rule = ['FORWARD', '-s', src.podSubnet4, '-d', dst.podSubnet4, '-j', 'DROP'];
    execFileSync('nsenter', [`--net=${dst.netnsPath}`, 'iptables', '-I', ...rule]);
    try {
      const r = await podscope('probe', '--all-nodes', '--trace', '-o', 'json', pods[1]!.id);
      expect(r.code).toBe(5);
      const report = JSON.parse(r.stdout) as ProbeReport;
      const path = report.paths.find((p) => p.kind === 'peer' && p.fromNode === src.hostname && p.toNode === dst.hostname)!;
      expect(path.verdict).toBe('timeout');
      expect(path.trace!.steps.find((s) => s.decisive)).toMatchObject({
        kind: 'netfilter',
        node: dst.hostname,
        netns: `node:${dst.hostname}`,
        table: 'filter',
        chain: 'FORWARD',
        verdict: 'DROP',
        owner: null,
      });
      expect(path.why).toContain('FORWARD');
      // the same pod's paths to the first node still work
      expect(report.paths.filter((p) => p.toNode === nodeName(0) && p.fromNode === src.hostname).every(ok)).toBe(true);
    } finally {
      execFileSync('nsenter', [`--net=${dst.netnsPath}`, 'iptables', '-D', ...rule]);
    }
  });

  it("a node's link below its pods' MTU: paths into it an MTU black hole naming that node's eth0; out of it the smaller MTU, PMTU discovery working", async () => {
    const [a, b] = [cluster!.nodes[0]!, cluster!.nodes[2]!];
    const [podA, podB] = [pods[0]!, pods[2]!];
    // the node's veth end drops a received frame above its MTU with no ICMP; what it forwards out is answered
    // "fragmentation needed" by the node itself
    execFileSync('ip', ['-n', b.netns, 'link', 'set', 'eth0', 'mtu', '1400']);
    try {
      const r = await podscope('probe', '--all-nodes', '-o', 'json', podA.id);
      await record(a, b, podA, podB);
      expect(r.code, r.stderr).toBe(5);
      const report = JSON.parse(r.stdout) as ProbeReport;
      // the audit's expectations below are the IPv4 paths' (the cluster is dual-stack)
      const v4 = (p: ProbeReport['paths'][number]) => p.family !== 6 && !p.to.startsWith('[');
      const into = report.paths.find((p) => v4(p) && p.kind === 'peer' && p.fromNode === a.hostname && p.toNode === b.hostname)!;
      // it connects (small packets): only the audit sees it
      expect(into.verdict).toBe('reachable');
      expect(into.mtu).toMatchObject({
        interfaceMtu: 1500,
        blackHole: true,
        at: { node: b.hostname, netns: `node ${b.hostname}`, interface: 'eth0', mtu: 1400 },
      });
      // a veth lets 4 bytes past its MTU through (a VLAN tag's room)
      expect(into.mtu!.pathMtu).toBeGreaterThanOrEqual(1400);
      expect(into.mtu!.pathMtu).toBeLessThan(1500);
      // the host port on that node reaches the same pod over the same links: a black hole too
      expect(report.paths.find((p) => p.kind === 'hostPort' && p.toNode === b.hostname)!.mtu).toMatchObject({ blackHole: true });
      const back = report.paths.find((p) => v4(p) && p.kind === 'peer' && p.fromNode === b.hostname && p.toNode === a.hostname)!;
      expect(back.verdict).toBe('reachable');
      expect(back.mtu).toMatchObject({
        pathMtu: 1400,
        blackHole: false,
        pmtud: true,
        at: { node: b.hostname, netns: `node ${b.hostname}`, interface: 'eth0', mtu: 1400 },
      });
      expect(report.paths.filter((p) => p.fromNode !== p.toNode && p.mtu?.blackHole).every((p) => p.toNode === b.hostname)).toBe(true);
      // the third node's paths: the whole interface MTU crosses, nothing named
      const third = report.paths.filter((p) => v4(p) && p.kind === 'peer' && (p.toNode === nodeName(1) || p.fromNode === nodeName(1)));
      expect(third.length).toBe(2);
      for (const p of third) expect(p.mtu).toMatchObject({ pathMtu: 1500, blackHole: false });
      expect(third.every((p) => p.mtu!.at === undefined)).toBe(true);
    } finally {
      execFileSync('ip', ['-n', b.netns, 'link', 'set', 'eth0', 'mtu', '1500']);
      // the MTU the node answered is remembered by its pod's kernel for minutes: forgotten, as before the test
      execFileSync('nsenter', [`--net=${await podNetnsSeen(podB)}`, 'ip', 'route', 'flush', 'cache']);
    }
  });

  it("topology --all-nodes: the hidden node's pod found on its node, its veth and bridge read in that node's netns", async () => {
    const pod = pods[1]!;
    const r = await podscope('topology', '--all-nodes', '-o', 'json', pod.id);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout) as PodTopology;
    expect(t.node).toBe(pod.node.hostname);
    // the pod's eth0 joined by its veth to the node's CNI bridge: both only exist in the node's netns
    expect(t.nodes).toContainEqual(expect.objectContaining({ kind: 'pod-if', name: 'eth0' }));
    expect(t.nodes).toContainEqual(expect.objectContaining({ kind: 'host-veth', netns: 'host' }));
    expect(t.nodes).toContainEqual(expect.objectContaining({ kind: 'bridge', name: cluster!.lease.name('c1') }));
    expect(t.edges.some((e) => e.kind === 'veth')).toBe(true);
    expect(t.errors).toEqual([]);
  });

  it('nothing of any node changed by listing, probing, the matrix, the traces, the topology and the MTU audits', async () => {
    expect(await clusterSnapshot()).toEqual(before);
  });
});

/** a pod's netns file as the host sees it: a private node's are on its own /run, reached through its root */
async function podNetnsSeen(p: (typeof pods)[number]): Promise<string> {
  const [s] = await p.node.containerd.api.foreignSandboxes([p.id]);
  const spec = (s!.verbose as { runtimeSpec: { linux: { namespaces: Array<{ type: string; path?: string }> } } }).runtimeSpec.linux
    .namespaces;
  const path = spec.find((x) => x.type === 'network')!.path!;
  // /var/run is an absolute symlink to /run
  return p.node.privateMount ? `/proc/${p.node.containerd.pid}/root${path.replace(/^\/var\/run\//, '/run/')}` : path;
}

/**
 * With PODSCOPE_TEST_RECORD=<dir>: the kernel states of every netns a path between two nodes crosses, for the
 * cross-node narrow-link finder's unit test (tests/fixtures/mtu/across.json); the host's links are kept to the
 * cluster's bridge and its ports.
 */
async function record(a: KindNode, b: KindNode, podA: (typeof pods)[number], podB: (typeof pods)[number]): Promise<void> {
  const dir = process.env.PODSCOPE_TEST_RECORD;
  if (!dir) return;
  const state = (netns: string | undefined) => ({
    links: JSON.parse(inNetns(netns, 'ip', ['-d', '-j', 'addr', 'show'])) as Array<{ ifname: string; master?: string }>,
    routes: JSON.parse(inNetns(netns, 'ip', ['-j', '-4', 'route', 'show', 'table', 'all'])) as unknown[],
  });
  const host = state(undefined);
  const out = {
    host: { links: host.links.filter((l) => l.ifname === cluster!.bridge || l.master === cluster!.bridge), routes: [] },
    nodeA: { name: a.hostname, ...state(a.netnsPath) },
    nodeB: { name: b.hostname, ...state(b.netnsPath) },
    podA: state(await podNetnsSeen(podA)),
    podB: state(await podNetnsSeen(podB)),
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'across.json'), JSON.stringify(out, null, 1));
}

/** Everything a measurement could leave behind on any node: its netfilter and routes, its pods' netns, the CNI cache. */
async function clusterSnapshot(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { tracefs: tracefsInstances() };
  for (const n of cluster!.nodes) {
    const podNetns: Record<string, unknown> = {};
    for (const p of pods.filter((x) => x.node === n)) {
      const seen = await podNetnsSeen(p);
      podNetns[p.id] = {
        iptables: netfilterOf(seen).iptables,
        processes: processesIn(seen),
        cache: cniCacheOf(p.id),
      };
    }
    out[n.hostname] = {
      ...netfilterOf(n.netnsPath),
      routes: inNetns(n.netnsPath, 'ip', ['route']) + inNetns(n.netnsPath, 'ip', ['-6', 'route']),
      processes: processesIn(n.netnsPath),
      pods: podNetns,
    };
  }
  return out;
}
