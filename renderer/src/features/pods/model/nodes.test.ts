/**
 * Several nodes in one pods list: the union of each node's list with each pod's node; a runtime added twice lists its
 * pods once; host ports are grouped per node (a clash needs one node's netns); the listed nodes drop a node removed
 * elsewhere; a row's cells follow its own node's runtime.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_ENDPOINT_CAPABILITIES, type EndpointView } from '../../../../../shared/domain/endpoints';
import { listedNodeIds } from '../../../lib/endpoint';
import { pod } from '../../../test/pod-summary';
import { mergeNodeLists, podsByNode, rowNode } from './nodes';

const a1 = pod('web', 'default');
const a2 = pod('db', 'default');
const c1 = pod('kind-pod', 'default');

const view = (id: string, over: Partial<EndpointView> = {}): EndpointView => ({
  id,
  label: id,
  kind: 'cri',
  connected: true,
  capabilities: { ...LOCAL_ENDPOINT_CAPABILITIES, liveNetwork: false },
  ...over,
});

describe('the pods of several nodes', () => {
  it('lists the union with each pod under its node; one node keeps its own array', () => {
    const one = [a1, a2];
    expect(mergeNodeLists([{ nodeId: 'local', pods: one }]).all).toBe(one);
    const { all, nodeOf } = mergeNodeLists([
      { nodeId: 'local', pods: [a1, a2] },
      { nodeId: 'kind-worker', pods: [c1] },
      { nodeId: 'not-yet', pods: undefined },
    ]);
    expect(all.map((p) => p.metadata.name)).toEqual(['web', 'db', 'kind-pod']);
    expect([...nodeOf]).toEqual([
      [a1.id, 'local'],
      [a2.id, 'local'],
      [c1.id, 'kind-worker'],
    ]);
    expect([...podsByNode(all, nodeOf)].map(([n, ps]) => [n, ps.length])).toEqual([
      ['local', 2],
      ['kind-worker', 1],
    ]);
  });

  it('a runtime added twice (its socket, and the same through /proc/<pid>/root) lists each pod once, under the first node', () => {
    const { all, nodeOf } = mergeNodeLists([
      { nodeId: 'ctd', pods: [c1] },
      { nodeId: 'ctd-again', pods: [c1] },
    ]);
    expect(all).toEqual([c1]);
    expect(nodeOf.get(c1.id)).toBe('ctd');
  });

  it('keeps the listed nodes that still exist, in the endpoints order; none left means the current one', () => {
    const eps = [view('local', { kind: 'podscope-engine' }), view('k1'), view('k2')];
    expect(listedNodeIds(eps, ['k2', 'local'], 'local')).toEqual(['local', 'k2']);
    expect(listedNodeIds(eps, ['gone'], 'k1')).toEqual(['k1']);
    expect(listedNodeIds(undefined, ['k2'], 'local')).toEqual(['k2']);
  });

  it("a row's cells follow its own node: a CRI node lists no host ports and is not probed from here", () => {
    expect(rowNode('k1', view('k1', { label: 'kind-worker' }), false)).toEqual({
      id: 'k1',
      label: 'kind-worker',
      hostPortsListed: false,
      probeable: false,
      containersUnavailable: false,
      stale: false,
    });
    expect(rowNode('local', view('local', { kind: 'podscope-engine', capabilities: LOCAL_ENDPOINT_CAPABILITIES }), true)).toMatchObject({
      hostPortsListed: true,
      probeable: true,
      stale: true,
    });
  });
});
