/**
 * `podscope nodes` on a machine with a kind-shaped cluster (a node in its own netns only, one also in a private mount
 * namespace, one also in its own pid namespace) and a plain containerd in the host's namespaces: every one is found,
 * the hidden ones through /proc/<pid>/root, each with its hostname, namespaces, node address and pod subnets — and
 * the runtimes still have exactly the pods they had (discovery only looks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeDiscovery, NodeView } from '../../shared/domain/nodes';
import { startContainerd, type ContainerdFixture } from '../../testkit/containerd-fixture';
import { startKindCluster, type KindCluster } from '../../testkit/kind-cluster';
import { podscope } from './helpers/podscope-cli';

let cluster: KindCluster | undefined;
let plain: ContainerdFixture | undefined;
let found: NodeDiscovery | undefined;

beforeAll(async () => {
  cluster = await startKindCluster([{}, { privateMount: true }, { privateMount: true, ownPid: true }]);
  plain = await startContainerd({});
  const r = await podscope('nodes', '-o', 'json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  found = JSON.parse(r.stdout) as NodeDiscovery;
});

afterAll(async () => {
  await plain?.stop();
  await cluster?.stop();
});

const byPid = (pid: number): NodeView | undefined => found!.nodes.find((n) => n.pid === pid);

describe('podscope nodes', () => {
  it('finds every kind node by its hostname, the hidden ones through their root', () => {
    for (const k of cluster!.nodes) {
      const n = byPid(k.containerd.pid);
      expect(n, `node ${k.hostname} (pid ${k.containerd.pid}) in ${JSON.stringify(found!.nodes.map((x) => x.endpoint))}`).toBeDefined();
      expect(n).toMatchObject({
        name: k.hostname,
        nameFrom: 'uts-hostname',
        endpoint: k.containerd.socketPath,
        socketPath: k.containerd.innerSocketPath,
        foundBy: 'process',
        runtimeName: 'containerd',
        runtimeApiVersion: 'v1',
      });
      expect(n!.endpoint.startsWith(`/proc/${k.containerd.pid}/root/`)).toBe(k.privateMount);
      expect(n!.namespaces.net.host).toBe(false);
      expect(n!.namespaces.uts.host).toBe(false);
      expect(n!.namespaces.mnt.host).toBe(!k.privateMount);
      expect(n!.namespaces.pid.host).toBe(!k.ownPid);
      // containerd is its pid namespace's first process (the shell before it exec'd into it)
      expect(n!.nsPid).toBe(k.ownPid ? 1 : undefined);
      // the node link is dual-stack, as a dual-stack kind cluster's
      expect(n!.addresses).toEqual([
        { ifName: 'eth0', cidr: `${k.address}/24` },
        { ifName: 'eth0', cidr: `${k.address6}/64` },
      ]);
      expect(n!.podSubnets.filter((s) => s.source === 'cni-config').map((s) => s.cidr)).toEqual([k.podSubnet4, k.podSubnet6]);
      // kindnet-style routes to the other nodes' pod subnets
      expect(n!.routes.map((r) => r.dst).sort()).toEqual(
        cluster!.nodes
          .filter((o) => o !== k)
          .map((o) => o.podSubnet4)
          .sort(),
      );
    }
  });

  it('finds the plain containerd in the host namespaces under a derived name', () => {
    const n = byPid(plain!.pid);
    expect(n).toMatchObject({ endpoint: plain!.socketPath, nameFrom: 'derived', runtimeName: 'containerd' });
    expect(Object.values(n!.namespaces).every((ns) => ns.host)).toBe(true);
    expect(n!.podSubnets.filter((s) => s.source === 'cni-config').map((s) => s.cidr)).toEqual([plain!.subnet4, plain!.subnet6]);
  });

  it('changes nothing: no node has a pod afterwards', async () => {
    for (const k of cluster!.nodes) expect(await k.containerd.api.list()).toEqual([]);
    expect(await plain!.api.list()).toEqual([]);
  });
});
