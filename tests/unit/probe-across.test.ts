/**
 * Paths across nodes (probe/across.ts) on the simulated network: two nodes, each a netns with its own address and pod
 * subnet, a pod on each. Every path is a connect judged by the nonce and names both nodes; a path that fails while
 * a node lacks the route to the other node's pod subnet names that node and route; every agent is closed afterwards.
 */
import { describe, expect, it } from 'vitest';
import type { PodFacts } from '../../electron/engine/common/pod-facts';
import type { KernelRoute } from '../../electron/engine/kernel/types';
import { probeAcrossNodes, probeMatrix, type AcrossNode } from '../../electron/engine/probe/across';
import { FakeProbeNet } from '../../testkit/fakes/fake-probe-net';

function pod(id: string, name: string, ip: string, hostPort?: number): PodFacts {
  return {
    id,
    name,
    config: {
      metadata: { name, namespace: 'x', uid: name, attempt: 0 },
      port_mappings: hostPort ? [{ protocol: 0, container_port: 8080, host_port: hostPort, host_ip: '' }] : [],
    } as unknown as PodFacts['config'],
    runtimeHandler: '',
    createdAtNs: '1',
    state: 'Ready',
    netnsPath: `/run/netns/${name}`,
    ip,
    additionalIps: [],
  };
}

const route = (dst: string, gateway?: string): KernelRoute => ({ family: 4, table: 'main', dst, ...(gateway && { gateway }), dev: 'eth0' });
const route6 = (dst: string, gateway?: string): KernelRoute => ({ ...route(dst, gateway), family: 6 });

/** the same two nodes dual-stack: each pod and node also has an IPv6 address, each node kindnet's IPv6 routes */
function dualStack() {
  const w = world();
  const [web, api] = [w.a.pods[0]!, w.b.pods[0]!];
  web.additionalIps = ['fd00:10:244::5'];
  api.additionalIps = ['fd00:10:244:1::7'];
  w.a.addresses.push('fc00:f853::2');
  w.b.addresses.push('fc00:f853::3');
  w.a.podSubnets.push('fd00:10:244::/64');
  w.b.podSubnets.push('fd00:10:244:1::/64');
  const addresses = new Map<string, string>([
    ['10.244.0.5', '/run/netns/web'],
    ['10.244.1.7', '/run/netns/api'],
    ['fd00:10:244::5', '/run/netns/web'],
    ['fd00:10:244:1::7', '/run/netns/api'],
    ['172.18.0.2', w.a.netnsPath!],
    ['172.18.0.3', w.b.netnsPath!],
  ]);
  const net = new FakeProbeNet(() => ({ addresses, nat: { v4: [], v6: [] } }));
  const routes = new Map([
    [
      w.a.netnsPath!,
      [
        ...w.routes.get(w.a.netnsPath!)!,
        route6('fd00:10:244::/64'),
        route6('fd00:10:244:1::/64', 'fc00:f853::3'),
        route6('default', 'fc00:f853::1'),
      ],
    ],
    [
      w.b.netnsPath!,
      [
        ...w.routes.get(w.b.netnsPath!)!,
        route6('fd00:10:244:1::/64'),
        route6('fd00:10:244::/64', 'fc00:f853::2'),
        route6('default', 'fc00:f853::1'),
      ],
    ],
  ]);
  net.withLinks(new Map([...routes].map(([ns, r]) => [ns, { links: [], routes: r }])));
  return { ...w, net, routes };
}

function world() {
  const a: AcrossNode = {
    name: 'kind-control-plane',
    netnsPath: '/proc/11/ns/net',
    addresses: ['172.18.0.2'],
    podSubnets: ['10.244.0.0/24'],
    pods: [pod('a'.repeat(64), 'web', '10.244.0.5', 30080)],
  };
  const b: AcrossNode = {
    name: 'kind-worker',
    netnsPath: '/proc/22/ns/net',
    addresses: ['172.18.0.3'],
    podSubnets: ['10.244.1.0/24'],
    pods: [pod('b'.repeat(64), 'api', '10.244.1.7', 30081)],
  };
  const addresses = new Map<string, string>([
    ['10.244.0.5', '/run/netns/web'],
    ['10.244.1.7', '/run/netns/api'],
    ['172.18.0.2', a.netnsPath!],
    ['172.18.0.3', b.netnsPath!],
  ]);
  const net = new FakeProbeNet(() => ({ addresses, nat: { v4: [], v6: [] } }));
  const routes = new Map([
    [a.netnsPath!, [route('default', '172.18.0.1'), route('10.244.0.0/24'), route('10.244.1.0/24', '172.18.0.3'), route('172.18.0.0/16')]],
    [b.netnsPath!, [route('default', '172.18.0.1'), route('10.244.1.0/24'), route('10.244.0.0/24', '172.18.0.2'), route('172.18.0.0/16')]],
  ]);
  net.withLinks(new Map([...routes].map(([ns, r]) => [ns, { links: [], routes: r }])));
  return { a, b, net, routes };
}

describe('probe across nodes', () => {
  it('pod → pod both ways and node → pod, each naming its nodes, reachable by the nonce; no agent left open', async () => {
    const { a, b, net } = world();
    const { paths, errors } = await probeAcrossNodes({ net }, [a, b], a.pods[0]!.id);
    expect(errors).toEqual([]);
    expect(paths).toContainEqual(
      expect.objectContaining({
        kind: 'peer',
        from: 'pod',
        fromNode: a.name,
        toNode: b.name,
        verdict: 'reachable',
        answeredBy: b.pods[0]!.id,
      }),
    );
    expect(paths).toContainEqual(
      expect.objectContaining({
        kind: 'peer',
        from: 'peer api',
        fromNode: b.name,
        toNode: a.name,
        verdict: 'reachable',
        answeredBy: a.pods[0]!.id,
      }),
    );
    expect(paths).toContainEqual(
      expect.objectContaining({ kind: 'podPort', from: `node ${b.name}`, fromNode: b.name, toNode: a.name, verdict: 'reachable' }),
    );
    expect(net.openAgents()).toBe(0);
  });

  it("to each port the other node's pod declares, each way, beside the network path; a DROP on that port fails that path only", async () => {
    const { a, b, net } = world();
    net.blockPort('10.244.1.7', 8080);
    const { paths } = await probeAcrossNodes({ net }, [a, b], a.pods[0]!.id);
    const ports = paths.filter((p) => p.kind === 'peerPort');
    expect(ports.map((p) => [p.from, p.to, p.fromNode, p.toNode, p.verdict, p.declaredBy])).toEqual([
      ['pod', '10.244.1.7:8080', a.name, b.name, 'timeout', 'port mapping 0'],
      ['peer api', '10.244.0.5:8080', b.name, a.name, 'reachable', 'port mapping 0'],
    ]);
    expect(paths.filter((p) => p.kind === 'peer').map((p) => p.verdict)).toEqual(['reachable', 'reachable']);
    expect(net.openAgents()).toBe(0);
  });

  it("a node without the route to the other node's pod subnet: the failed path names that node, the route it lacks and the one taken", async () => {
    const { a, b, net, routes } = world();
    routes.set(
      a.netnsPath!,
      routes.get(a.netnsPath!)!.filter((r) => r.dst !== '10.244.1.0/24'),
    );
    net.withLinks(new Map([...routes].map(([ns, r]) => [ns, { links: [], routes: r }])));
    // the packets the missing route sends elsewhere never arrive
    net.blackhole('10.244.1.7');
    const { paths } = await probeAcrossNodes({ net }, [a, b], a.pods[0]!.id);
    const out = paths.find((p) => p.kind === 'peer' && p.fromNode === a.name)!;
    expect(out.verdict).toBe('timeout');
    expect(out.why).toBe(
      `node ${a.name} has no route to 10.244.1.0/24 (node ${b.name}'s pods) via 172.18.0.3: packets to 10.244.1.7 never reach node ${b.name}; its kernel takes default via 172.18.0.1 dev eth0 instead`,
    );
  });

  it('a failed path whose nodes both route each other is not blamed on a route', async () => {
    const { a, b, net } = world();
    net.blackhole('10.244.1.7');
    const { paths } = await probeAcrossNodes({ net }, [a, b], a.pods[0]!.id);
    const out = paths.find((p) => p.kind === 'peer' && p.fromNode === a.name)!;
    expect(out.verdict).toBe('timeout');
    expect(out.why).toBeUndefined();
  });

  it('the matrix: every pod → every other pod, pods grouped by node, one cell per ordered pair', async () => {
    const { a, b, net } = world();
    const m = await probeMatrix({ net }, [a, b]);
    expect(m.nodes).toEqual([a.name, b.name]);
    expect(m.pods.map((p) => [p.node, p.name, p.ip])).toEqual([
      [a.name, 'x/web', '10.244.0.5'],
      [b.name, 'x/api', '10.244.1.7'],
    ]);
    expect(m.cells.map((c) => [c.fromNode, c.toNode, c.verdict])).toEqual([
      [a.name, b.name, 'reachable'],
      [b.name, a.name, 'reachable'],
    ]);
    expect(net.openAgents()).toBe(0);
  });

  it('dual stack: the pod paths across nodes in each family, IPv4 ones first, all reachable by the nonce', async () => {
    const { a, b, net } = dualStack();
    const { paths } = await probeAcrossNodes({ net }, [a, b], a.pods[0]!.id);
    const peers = paths.filter((p) => p.kind === 'peer');
    expect(peers.map((p) => [p.fromNode, p.toNode, p.family, p.to.replace(/:\d+$/, ''), p.verdict])).toEqual([
      [a.name, b.name, 4, '10.244.1.7', 'reachable'],
      [b.name, a.name, 4, '10.244.0.5', 'reachable'],
      [a.name, b.name, 6, '[fd00:10:244:1::7]', 'reachable'],
      [b.name, a.name, 6, '[fd00:10:244::5]', 'reachable'],
    ]);
    expect(net.openAgents()).toBe(0);
  });

  it("an IPv6 route missing on a node: the IPv6 paths name it (the subnet, the node's IPv6 gateway), the IPv4 ones still reach", async () => {
    const { a, b, net, routes } = dualStack();
    routes.set(
      a.netnsPath!,
      routes.get(a.netnsPath!)!.filter((r) => r.dst !== 'fd00:10:244:1::/64'),
    );
    net.withLinks(new Map([...routes].map(([ns, r]) => [ns, { links: [], routes: r }])));
    net.blackhole('fd00:10:244:1::7');
    const { paths } = await probeAcrossNodes({ net }, [a, b], a.pods[0]!.id);
    const out6 = paths.find((p) => p.kind === 'peer' && p.fromNode === a.name && p.family === 6)!;
    expect(out6.verdict).toBe('timeout');
    expect(out6.why).toBe(
      `node ${a.name} has no route to fd00:10:244:1::/64 (node ${b.name}'s pods) via fc00:f853::3: packets to fd00:10:244:1::7 never reach node ${b.name}; its kernel takes default via fc00:f853::1 dev eth0 instead`,
    );
    expect(paths.find((p) => p.kind === 'peer' && p.fromNode === a.name && p.family === 4)!.verdict).toBe('reachable');
  });
});
