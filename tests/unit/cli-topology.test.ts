/** `podscope topology`'s text: a tree from each pod link, every edge kind named with its owner, over recorded kernel output. */
import { describe, expect, it } from 'vitest';
import { describeTopology } from '../../electron/cli/commands/topology';
import { parseFilters, parseLinks, parseRoutes } from '../../electron/engine/kernel/parse';
import { buildTopology } from '../../electron/engine/topology/build';
import { ownersFromTrace } from '../../electron/engine/topology/owners';
import { pluginAdd, topologyFixture } from './helpers/topology-fixtures';

describe('describeTopology', () => {
  it('ptp + bandwidth on eth0 and macvlan on eth1: veth, route, redirect and parent, each with its plugin', () => {
    const ns = '/var/run/netns/ptpx4';
    const raw = {
      host: {
        links: parseLinks(topologyFixture('host-ip-addr.json')),
        routes: parseRoutes(topologyFixture('host-ip-route-4.json'), 4),
        bridgePorts: [],
        ingressFilters: parseFilters(topologyFixture('host-tc-filter-ingress.json'), 'vethee2fcdad'),
      },
      pods: { [ns]: parseLinks(topologyFixture('ptpx4-ip-addr.json')) },
      errors: [],
    };
    const owners = ownersFromTrace([
      pluginAdd('ptpx-bw', 0, 'ptp', {}, [{ name: 'vethee2fcdad' }, { name: 'eth0', sandbox: ns }]),
      pluginAdd('ptpx-bw', 1, 'bandwidth', {}, [{ name: 'vethee2fcdad' }, { name: 'eth0', sandbox: ns }, { name: 'bwpdefe712dc431' }]),
      pluginAdd('ptpx-mv', 0, 'macvlan', {}, [{ name: 'eth1', sandbox: ns }]),
    ]);
    const text = describeTopology({
      id: 'p4',
      readAt: '2026-11-25T23:10:00.000Z',
      ...buildTopology(raw, [{ sandboxId: 'p4', netnsPath: ns, owners }]),
      errors: [],
    });
    expect(text).toContain('Topology of p4, read from the kernel at 2026-11-25T23:10:00.000Z');
    expect(text).toContain('  eth0 (veth)  10.75.4.2/24  UP  [ptp/ptpx-bw]');
    expect(text).toContain('    ─veth→ host vethee2fcdad (veth)  10.75.4.1/32  UP  [ptp/ptpx-bw]');
    expect(text).toContain('      ─route 10.75.4.2 dev vethee2fcdad→ host stack  [ptp/ptpx-bw]');
    expect(text).toContain('      ─redirect ingress of vethee2fcdad → egress of bwpdefe712dc431→ host bwpdefe712dc431 (ifb)');
    expect(text).toContain('[bandwidth/ptpx-bw]');
    expect(text).toContain('    ─parent macvlan bridge→ host ptpxa (veth)');
    expect(text).toContain('      ─veth→ host ptpxb (veth)');
    // lo last
    expect(text.indexOf('  lo')).toBeGreaterThan(text.indexOf('  eth1'));
  });
});
