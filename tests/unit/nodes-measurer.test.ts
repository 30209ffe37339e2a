/**
 * The measurer across nodes finds a pod on its node before measuring it there: `topology --all-nodes` reads the pod's
 * wiring with its own node's measurer (placed in that node's namespaces) and names the node; an id on no node, or a
 * prefix of pods on two nodes, is refused naming the nodes. Each node's measurer is a recording stand-in here (the
 * real ones run against kind-shaped nodes in tests/real/nodes-probe-across.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { PodFacts } from '../../electron/engine/common/pod-facts';
import type { ForeignMeasurements } from '../../electron/engine/api';
import type { ForeignPods } from '../../electron/engine/foreign/lookup';
import { createNodesMeasurer } from '../../electron/engine/service/nodes-measurer';
import { FakeProbeNet } from '../../testkit/fakes/fake-probe-net';

const pod = (id: string): PodFacts =>
  ({ id, name: id.slice(0, 4), state: 'Ready', createdAtNs: '1', ip: '', additionalIps: [] }) as unknown as PodFacts;

function standIn(name: string, ids: string[], asked: string[]): ForeignMeasurements {
  const none = async () => {
    throw new Error('not asked');
  };
  return {
    pods: async () => ({ all: () => ids.map(pod) }) as unknown as ForeignPods,
    topology: async (id) => {
      asked.push(`${name}:${id}`);
      return { id, readAt: 'now', nodes: [], edges: [], errors: [] };
    },
    probe: none,
    lastProbe: none,
    live: none,
    throughput: none,
    networkTopology: none,
    cniCheck: none,
    cniStatus: none,
    recordedAdd: none,
    subscribe: () => () => undefined,
    close: () => undefined,
  };
}

function measurer(asked: string[]) {
  const node = (name: string) => ({ name, netnsPath: `/proc/${name.length}/ns/net`, addresses: [], podSubnets: [] });
  return createNodesMeasurer({ probeNet: new FakeProbeNet(() => ({ addresses: new Map(), nat: { v4: [], v6: [] } })) }, [
    { node: node('kind-control-plane'), measurer: standIn('kind-control-plane', ['a1'.repeat(32)], asked) },
    { node: node('kind-worker'), measurer: standIn('kind-worker', ['b1'.repeat(32), 'ab'.repeat(32)], asked) },
  ]);
}

describe('topology across nodes', () => {
  it('reads the pod on its own node and names that node', async () => {
    const asked: string[] = [];
    const m = measurer(asked);
    const t = await m.topology('b1b1');
    expect(t.node).toBe('kind-worker');
    expect(asked).toEqual(['kind-worker:b1b1']);
    m.close();
  });

  it('refuses an id on no node, and a prefix of pods on two nodes, naming the nodes', async () => {
    const m = measurer([]);
    await expect(m.topology('ffff')).rejects.toMatchObject({
      code: 'NotFound',
      message: expect.stringContaining('kind-control-plane, kind-worker'),
    });
    await expect(m.topology('a')).rejects.toMatchObject({ code: 'InvalidArgument', message: expect.stringContaining('several nodes') });
    m.close();
  });
});
