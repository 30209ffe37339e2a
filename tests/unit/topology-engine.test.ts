/**
 * The topology verb end to end over the OS fakes: the engine's own kernel reader and topology reader run the `ip`,
 * `bridge` and `tc` commands the fake kernel answers from what the fake plugins did; owners come from the run's trace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hasCode } from '../../shared/domain/errors';
import { PodTopologySchema } from '../../shared/domain/topology';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

let te: TestEngine | undefined;
afterEach(async () => {
  await te?.close();
  te = undefined;
});

const meta = (name: string) => ({ metadata: { name, namespace: 'default', uid: `u-${name}`, attempt: 0 } });

describe('topology over the fake kernel', () => {
  it('a bridge pod with bandwidth: eth0 → its veth peer → cni0 → host, the ifb redirect, each with the plugin that made it', async () => {
    te = await createTestEngine();
    const { id } = await te.engine.run({
      config: { ...meta('bw'), annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' } },
    });
    const before = Date.now();
    const t = PodTopologySchema.parse(await te.engine.topology(id));
    expect(Date.parse(t.readAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(t.errors).toEqual([]);
    const eth0 = t.nodes.find((n) => n.id === `pod:${id}:eth0`)!;
    const bridge = { plugin: 'bridge', network: 'containerd-net', index: 0 };
    expect(eth0).toMatchObject({ kind: 'pod-if', linkKind: 'veth', owner: bridge });
    expect(t.nodes.find((n) => n.id === `pod:${id}:lo`)).toMatchObject({ owner: { plugin: 'loopback', network: 'cni-loopback' } });
    const veth = t.edges.find((e) => e.from === eth0.id && e.kind === 'veth')!;
    expect(veth.owner).toEqual(bridge);
    expect(t.edges).toContainEqual({ from: veth.to, to: 'host:cni0', kind: 'bridge-port', owner: bridge });
    expect(t.edges).toContainEqual({ from: 'host:cni0', to: 'host', kind: 'host-stack', owner: bridge });
    const redirect = t.edges.find((e) => e.kind === 'redirect')!;
    expect(redirect).toMatchObject({ from: veth.to, owner: { plugin: 'bandwidth', network: 'containerd-net', index: 2 } });
    expect(t.nodes.find((n) => n.id === redirect.to)).toMatchObject({ kind: 'ifb', sandboxId: id });
    // the host veth's ingress filters were read from tc, for that veth only
    const hostVeth = veth.to.slice('host:'.length);
    expect(te.kernelCommands.ran.filter((l) => l.startsWith('tc '))).toEqual([`tc -j filter show dev ${hostVeth} ingress`]);
  });

  it('a pod without bandwidth annotations has no ifb, and two pods each find only their own veth', async () => {
    te = await createTestEngine();
    const a = await te.engine.run({ config: meta('a') });
    const b = await te.engine.run({ config: meta('b') });
    const ta = await te.engine.topology(a.id);
    expect(ta.edges.some((e) => e.kind === 'redirect')).toBe(false);
    const net = await te.engine.networkTopology('containerd-net');
    expect(net.sandboxes.map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
    const peers = net.edges.filter((e) => e.kind === 'veth').map((e) => e.from);
    expect(peers.sort()).toEqual([`pod:${a.id}:eth0`, `pod:${b.id}:eth0`].sort());
    expect(new Set(net.edges.filter((e) => e.kind === 'veth').map((e) => e.to)).size).toBe(2);
  });

  it('a stopped pod is not drawn', async () => {
    te = await createTestEngine();
    const { id } = await te.engine.run({ config: meta('s') });
    await te.engine.stop(id);
    await expect(te.engine.topology(id)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
  });
});
