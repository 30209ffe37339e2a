// @vitest-environment jsdom
/**
 * The diagram draws pods that have no bridge: each edge kind with its own class and label, owner badges on nodes and
 * edges, and only the columns that hold something.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import type { TopologyEdge, TopologyNode } from '../../../../shared/domain/topology';
import { layout, TopologyDiagram } from './TopologyDiagram';

afterEach(cleanup);

const ptp = { plugin: 'ptp', network: 'n1', index: 0 };
const mv = { plugin: 'macvlan', network: 'n2', index: 0 };
const nodes: TopologyNode[] = [
  { id: 'pod:s:eth0', kind: 'pod-if', name: 'eth0', netns: '/run/netns/p', linkKind: 'veth', adminUp: true, addresses: [], owner: ptp },
  {
    id: 'pod:s:eth1',
    kind: 'pod-if',
    name: 'eth1',
    netns: '/run/netns/p',
    linkKind: 'macvlan',
    mode: 'bridge',
    adminUp: true,
    addresses: [],
    owner: mv,
  },
  {
    id: 'pod:s:eth2',
    kind: 'host-device',
    name: 'eth2',
    netns: '/run/netns/p',
    originalName: 'ptpxc',
    adminUp: true,
    addresses: [],
    owner: { plugin: 'host-device', network: 'n3' },
  },
  { id: 'host:veth1', kind: 'host-veth', name: 'veth1', netns: 'host', adminUp: true, addresses: [], owner: ptp },
  { id: 'host:ptpxa', kind: 'host-link', name: 'ptpxa', netns: 'host', adminUp: true, addresses: [] },
  { id: 'host', kind: 'host', name: 'host', netns: 'host', addresses: [] },
];
const edges: TopologyEdge[] = [
  { from: 'pod:s:eth0', to: 'host:veth1', kind: 'veth', owner: ptp },
  { from: 'host:veth1', to: 'host', kind: 'route', detail: '10.75.1.2 dev veth1', owner: ptp },
  { from: 'pod:s:eth1', to: 'host:ptpxa', kind: 'parent', detail: 'macvlan bridge', owner: mv },
];

describe('TopologyDiagram', () => {
  it('leaves out the bridge column when there is no bridge', () => {
    expect(layout({ nodes }).columns).toEqual(['pod netns', 'host: veth peer · parent · ifb', 'host stack']);
  });

  it('draws each edge kind distinguishably, with its owner, and a badge on each owned node', () => {
    render(<TopologyDiagram nodes={nodes} edges={edges} label="t" onOpen={() => undefined} />);
    for (const k of ['veth', 'route', 'parent'])
      expect(screen.getByTestId(`topo-edge-${k}`).getAttribute('class')).toContain(`topo-edge-${k}`);
    expect(screen.getByTestId('topo-edge-route').textContent).toContain('10.75.1.2 dev veth1');
    expect(screen.getByTestId('topo-node-host-device-eth2').textContent).toContain('was ptpxc on the host');
    expect(screen.getByTestId('topo-node-host-device-eth2').getAttribute('data-owner')).toBe('host-device');
    expect(screen.getAllByTestId('topo-owner').map((b) => b.textContent?.replace(/^created.*?\)/, ''))).toEqual([
      'ptp',
      'macvlan',
      'host-device',
      'ptp',
    ]);
    expect(screen.getByTestId('topo-legend').textContent).toContain('macvlan/ipvlan/vlan on its parent link');
  });
});

describe('TopologyDiagram marks', () => {
  it('outlines a marked node in its tone, with a badge and the why as its tooltip', () => {
    render(
      <TopologyDiagram
        nodes={nodes}
        edges={[]}
        onOpen={() => {}}
        label="t"
        marks={new Map([['host:veth1', { tone: 'bad', label: 'black hole · MTU 1400', title: 'packets over 1400 vanish here' }]])}
      />,
    );
    const veth = screen.getByTestId('topo-node-host-veth-veth1');
    expect(veth.getAttribute('data-mark')).toBe('bad');
    expect(veth.getAttribute('class')).toContain('topo-mark-bad');
    expect(veth.querySelector('[data-testid="topo-mark"]')!.textContent).toContain('black hole · MTU 1400');
    expect(veth.querySelector(':scope > title')!.textContent).toBe('packets over 1400 vanish here');
    expect(screen.getByTestId('topo-node-pod-if-eth0').getAttribute('data-mark')).toBeNull();
  });
});
