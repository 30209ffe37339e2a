/**
 * The topology picture, built over kernel output: a bridge pod written in iproute2's shapes, and output recorded on a
 * Debian 12 host (iproute2 6.1, the reference plugins 1.1.1 run by hand) holding four netns: ptpx1 (ptp), ptpx2
 * (macvlan on a veth parent ptpxa, whose peer ptpxb is on the host too), ptpx3 (host-device: veth end ptpxc moved in
 * as eth0), ptpx4 (ptp + bandwidth as eth0, macvlan on ptpxa as eth1). This kernel has no vlan, ipvlan or vrf: those
 * cases are written by hand in the same shapes.
 */
import { describe, expect, it } from 'vitest';
import { parseBridgePorts, parseFilters, parseLinks, parseRoutes } from '../../electron/engine/kernel/parse';
import { buildTopology, type PodWiring, type RawTopology } from '../../electron/engine/topology/build';
import { noOwners, ownersFromTrace, type PodOwners } from '../../electron/engine/topology/owners';
import { NetworkTopologySchema, PodTopologySchema } from '../../shared/domain/topology';
import { pluginAdd, topologyFixture } from './helpers/topology-fixtures';

const A = 'a'.repeat(64);

describe('a bridge pod (iproute2 shapes)', () => {
  const raw: RawTopology = {
    host: {
      links: parseLinks(
        JSON.stringify([
          { ifindex: 1, ifname: 'lo', flags: ['LOOPBACK', 'UP'], mtu: 65536, operstate: 'UNKNOWN', address: '00:00:00:00:00:00' },
          {
            ifindex: 7,
            ifname: 'pst2-u',
            flags: ['BROADCAST', 'UP'],
            mtu: 1500,
            operstate: 'UP',
            address: 'aa:00:00:00:00:01',
            linkinfo: { info_kind: 'bridge' },
            addr_info: [{ family: 'inet', local: '10.225.0.1', prefixlen: 24, scope: 'global' }],
          },
          // a veth named like the pod's, but its peer is another ifindex: must not be picked
          {
            ifindex: 8,
            ifname: 'vethdecoy',
            flags: ['UP'],
            mtu: 1500,
            operstate: 'UP',
            master: 'pst2-u',
            link_index: 99,
            link_netnsid: 1,
            linkinfo: { info_kind: 'veth', info_slave_kind: 'bridge' },
          },
          {
            ifindex: 9,
            ifname: 'veth1234',
            flags: ['UP'],
            mtu: 1500,
            operstate: 'UP',
            address: 'bb:00:00:00:00:02',
            master: 'pst2-u',
            link_index: 2,
            link_netnsid: 0,
            linkinfo: { info_kind: 'veth', info_slave_kind: 'bridge' },
          },
          { ifindex: 10, ifname: 'bwp1234', flags: ['UP'], mtu: 1500, operstate: 'UNKNOWN', linkinfo: { info_kind: 'ifb' } },
        ]),
      ),
      routes: [],
      bridgePorts: parseBridgePorts(
        JSON.stringify([
          { ifindex: 9, ifname: 'veth1234', master: 'pst2-u', state: 'forwarding', hairpin: true },
          { ifindex: 8, ifname: 'vethdecoy', master: 'pst2-u', state: 'forwarding', hairpin: false },
        ]),
      ),
      ingressFilters: parseFilters(topologyFixture('host-tc-filter-ingress.json').replaceAll('bwpdefe712dc431', 'bwp1234'), 'veth1234'),
    },
    pods: {
      '/run/netns/a': parseLinks(
        JSON.stringify([
          { ifindex: 1, ifname: 'lo', flags: ['LOOPBACK', 'UP'], mtu: 65536, operstate: 'UNKNOWN' },
          {
            ifindex: 2,
            ifname: 'eth0',
            flags: ['UP'],
            mtu: 1500,
            operstate: 'UP',
            address: 'cc:00:00:00:00:03',
            link_index: 9,
            link_netnsid: 0,
            linkinfo: { info_kind: 'veth' },
            addr_info: [
              { family: 'inet', local: '10.225.0.5', prefixlen: 24, scope: 'global' },
              { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
            ],
          },
        ]),
      ),
    },
    errors: [],
  };
  const owners = ownersFromTrace([
    pluginAdd('pst2-u', 0, 'bridge', { bridge: 'pst2-u' }, [
      { name: 'pst2-u' },
      { name: 'veth1234' },
      { name: 'eth0', sandbox: '/run/netns/a' },
    ]),
    pluginAdd('pst2-u', 1, 'portmap', {}, [{ name: 'pst2-u' }, { name: 'veth1234' }, { name: 'eth0', sandbox: '/run/netns/a' }]),
    pluginAdd('pst2-u', 2, 'bandwidth', {}, [
      { name: 'pst2-u' },
      { name: 'veth1234' },
      { name: 'eth0', sandbox: '/run/netns/a' },
      { name: 'bwp1234' },
    ]),
  ]);
  const t = buildTopology(raw, [{ sandboxId: A, netnsPath: '/run/netns/a', owners }]);
  const node = (id: string) => t.nodes.find((n) => n.id === id)!;
  const bridge = { plugin: 'bridge', network: 'pst2-u', index: 0 };

  it('follows eth0 to the host veth whose ifindex the kernel names as its peer, then to the bridge and the host', () => {
    const pod = `pod:${A}:eth0`;
    expect(t.edges).toEqual(
      expect.arrayContaining([
        { from: pod, to: 'host:veth1234', kind: 'veth', owner: bridge },
        { from: 'host:veth1234', to: 'host:pst2-u', kind: 'bridge-port', owner: bridge },
        { from: 'host:pst2-u', to: 'host', kind: 'host-stack', owner: bridge },
      ]),
    );
    expect(t.nodes.some((n) => n.name === 'vethdecoy')).toBe(false);
  });

  it("draws the ifb from the veth's tc redirect, owned by the plugin whose result first listed it (bandwidth)", () => {
    expect(t.edges).toContainEqual({
      from: 'host:veth1234',
      to: 'host:bwp1234',
      kind: 'redirect',
      detail: 'ingress of veth1234 → egress of bwp1234',
      owner: { plugin: 'bandwidth', network: 'pst2-u', index: 2 },
    });
    // no redirect read, no edge: the CNI result listing the ifb is not enough
    const noTc = buildTopology({ ...raw, host: { ...raw.host, ingressFilters: [] } }, [
      { sandboxId: A, netnsPath: '/run/netns/a', owners },
    ]);
    expect(noTc.edges.some((e) => e.kind === 'redirect')).toBe(false);
    expect(noTc.nodes.some((n) => n.kind === 'ifb')).toBe(false);
  });

  it('carries addresses, MAC, MTU, state, hairpin and bridge membership as read', () => {
    expect(node(`pod:${A}:eth0`)).toMatchObject({
      kind: 'pod-if',
      netns: '/run/netns/a',
      mac: 'cc:00:00:00:00:03',
      mtu: 1500,
      state: 'UP',
      adminUp: true,
      addresses: [
        { family: 4, address: '10.225.0.5', prefixLen: 24, scope: 'global' },
        { family: 6, address: 'fe80::1', prefixLen: 64, scope: 'link' },
      ],
      owner: bridge,
    });
    expect(node('host:veth1234')).toMatchObject({
      kind: 'host-veth',
      netns: 'host',
      master: 'pst2-u',
      hairpin: true,
      portState: 'forwarding',
      sandboxId: A,
    });
    expect(node('host:pst2-u')).toMatchObject({ kind: 'bridge', addresses: [{ address: '10.225.0.1' }] });
    expect(node('host:bwp1234')).toMatchObject({ kind: 'ifb' });
  });

  it('a bridge without an address (isGateway off) has no host-stack edge: the host does not answer there', () => {
    const links = raw.host.links.map((l) => (l.name === 'pst2-u' ? { ...l, addresses: [] } : l));
    const t2 = buildTopology({ ...raw, host: { ...raw.host, links } }, [{ sandboxId: A, netnsPath: '/run/netns/a', owners }]);
    expect(t2.edges.some((e) => e.kind === 'host-stack')).toBe(false);
  });

  it('matches the shared schema', () => {
    expect(() => PodTopologySchema.parse({ id: A, readAt: '2026-11-25T23:00:00.000Z', ...t, errors: [] })).not.toThrow();
  });
});

describe('recorded: ptp, macvlan on a veth parent, host-device, ptp + bandwidth + a second network', () => {
  const raw: RawTopology = {
    host: {
      links: parseLinks(topologyFixture('host-ip-addr.json')),
      routes: parseRoutes(topologyFixture('host-ip-route-4.json'), 4),
      bridgePorts: [],
      ingressFilters: parseFilters(topologyFixture('host-tc-filter-ingress.json'), 'vethee2fcdad'),
    },
    pods: Object.fromEntries(
      ['ptpx1', 'ptpx2', 'ptpx3', 'ptpx4'].map((n) => [`/var/run/netns/${n}`, parseLinks(topologyFixture(`${n}-ip-addr.json`))]),
    ),
    errors: [],
  };
  const pod = (n: string, owners: PodOwners): PodWiring => ({ sandboxId: n, netnsPath: `/var/run/netns/${n}`, owners });
  const ptpOwners = ownersFromTrace([
    pluginAdd('ptpx-ptp', 0, 'ptp', {}, [{ name: 'vethfc7ea3b0' }, { name: 'eth0', sandbox: '/var/run/netns/ptpx1' }]),
  ]);
  const mvOwners = ownersFromTrace([
    pluginAdd('ptpx-mv', 0, 'macvlan', { master: 'ptpxa', mode: 'bridge' }, [{ name: 'eth0', sandbox: '/var/run/netns/ptpx2' }]),
  ]);
  const hdOwners = ownersFromTrace([
    pluginAdd('ptpx-hd', 0, 'host-device', { device: 'ptpxc' }, [{ name: 'eth0', sandbox: '/var/run/netns/ptpx3' }]),
  ]);
  const twoOwners = ownersFromTrace([
    pluginAdd('ptpx-bw', 0, 'ptp', {}, [{ name: 'vethee2fcdad' }, { name: 'eth0', sandbox: '/var/run/netns/ptpx4' }]),
    pluginAdd('ptpx-bw', 1, 'bandwidth', {}, [
      { name: 'vethee2fcdad' },
      { name: 'eth0', sandbox: '/var/run/netns/ptpx4' },
      { name: 'bwpdefe712dc431' },
    ]),
    pluginAdd('ptpx-mv', 0, 'macvlan', { master: 'ptpxa' }, [{ name: 'eth1', sandbox: '/var/run/netns/ptpx4' }]),
  ]);

  it("ptp: eth0's veth peer, and the host's /32 route to the pod address through it, owned by ptp", () => {
    const t = buildTopology(raw, [pod('ptpx1', ptpOwners)]);
    const ptp = { plugin: 'ptp', network: 'ptpx-ptp', index: 0 };
    expect(t.edges).toEqual([
      { from: 'pod:ptpx1:eth0', to: 'host:vethfc7ea3b0', kind: 'veth', owner: ptp },
      { from: 'host:vethfc7ea3b0', to: 'host', kind: 'route', detail: '10.75.1.2 dev vethfc7ea3b0', owner: ptp },
    ]);
    // the host veth carries the gateway as a /32; no bridge anywhere
    expect(t.nodes.find((n) => n.id === 'host:vethfc7ea3b0')).toMatchObject({
      kind: 'host-veth',
      addresses: [{ address: '10.75.1.1', prefixLen: 32 }, { scope: 'link' }],
    });
    expect(t.nodes.some((n) => n.kind === 'bridge')).toBe(false);
    // the pod's other links are drawn too (lo, DOWN as read)
    expect(t.nodes.find((n) => n.id === 'pod:ptpx1:lo')).toMatchObject({ kind: 'pod-if', state: 'DOWN', adminUp: false });
  });

  it('macvlan: eth0 leads to its parent link ptpxa on the host (by ifindex, confirmed by the `master` macvlan was given), and ptpxa to its veth peer', () => {
    const t = buildTopology(raw, [pod('ptpx2', mvOwners)]);
    const mv = { plugin: 'macvlan', network: 'ptpx-mv', index: 0 };
    expect(t.edges).toEqual([
      { from: 'pod:ptpx2:eth0', to: 'host:ptpxa', kind: 'parent', detail: 'macvlan bridge', owner: mv },
      { from: 'host:ptpxa', to: 'host:ptpxb', kind: 'veth' },
    ]);
    expect(t.nodes.find((n) => n.id === 'pod:ptpx2:eth0')).toMatchObject({ linkKind: 'macvlan', mode: 'bridge', owner: mv });
    expect(t.nodes.find((n) => n.id === 'host:ptpxa')).toMatchObject({ kind: 'host-link', linkKind: 'veth' });
    // a parent the plugin was not told about is not drawn from an ifindex alone (ifindexes are per namespace)
    const told = ownersFromTrace([
      pluginAdd('ptpx-mv', 0, 'macvlan', { master: 'eno1' }, [{ name: 'eth0', sandbox: '/var/run/netns/ptpx2' }]),
    ]);
    expect(buildTopology(raw, [pod('ptpx2', told)]).edges).toEqual([]);
  });

  it('host-device: eth0 is the moved link, with the name the kernel kept in its alias; its old veth peer is still on the host', () => {
    const t = buildTopology(raw, [pod('ptpx3', hdOwners)]);
    expect(t.nodes.find((n) => n.id === 'pod:ptpx3:eth0')).toMatchObject({
      kind: 'host-device',
      originalName: 'ptpxc',
      owner: { plugin: 'host-device', network: 'ptpx-hd', index: 0 },
    });
    // host-device did not make the pair: the veth edge has no owner
    expect(t.edges).toEqual([{ from: 'pod:ptpx3:eth0', to: 'host:ptpxd', kind: 'veth' }]);
    // without the alias, the plugin's `device` names it
    const noAlias = {
      ...raw,
      pods: { ...raw.pods, '/var/run/netns/ptpx3': raw.pods['/var/run/netns/ptpx3']!.map(({ alias: _a, ...l }) => l) },
    };
    expect(buildTopology(noAlias, [pod('ptpx3', hdOwners)]).nodes.find((n) => n.id === 'pod:ptpx3:eth0')?.originalName).toBe('ptpxc');
  });

  it('two networks on one pod: eth0 (ptp + bandwidth: route and ifb redirect) and eth1 (macvlan), each edge with its own owner', () => {
    const t = buildTopology(raw, [pod('ptpx4', twoOwners)]);
    expect(t.edges).toEqual(
      expect.arrayContaining([
        { from: 'pod:ptpx4:eth0', to: 'host:vethee2fcdad', kind: 'veth', owner: { plugin: 'ptp', network: 'ptpx-bw', index: 0 } },
        {
          from: 'host:vethee2fcdad',
          to: 'host',
          kind: 'route',
          detail: '10.75.4.2 dev vethee2fcdad',
          owner: { plugin: 'ptp', network: 'ptpx-bw', index: 0 },
        },
        {
          from: 'host:vethee2fcdad',
          to: 'host:bwpdefe712dc431',
          kind: 'redirect',
          detail: 'ingress of vethee2fcdad → egress of bwpdefe712dc431',
          owner: { plugin: 'bandwidth', network: 'ptpx-bw', index: 1 },
        },
        {
          from: 'pod:ptpx4:eth1',
          to: 'host:ptpxa',
          kind: 'parent',
          detail: 'macvlan bridge',
          owner: { plugin: 'macvlan', network: 'ptpx-mv', index: 0 },
        },
      ]),
    );
    // ptpx1's route (10.75.1.2) goes through another veth: not this pod's
    expect(t.edges.filter((e) => e.kind === 'route')).toHaveLength(1);
  });

  it("the host end of a veth must name the pod's link back: the same ifindex in another netns is not a peer", () => {
    // ptpx1's and ptpx4's eth0 are both ifindex 2; each finds only its own host veth
    const t = buildTopology(raw, [pod('ptpx1', ptpOwners), pod('ptpx4', twoOwners)]);
    const peers = t.edges.filter((e) => e.kind === 'veth' && e.from.startsWith('pod:')).map((e) => `${e.from}>${e.to}`);
    expect(peers.sort()).toEqual(['pod:ptpx1:eth0>host:vethfc7ea3b0', 'pod:ptpx4:eth0>host:vethee2fcdad']);
    expect(() => NetworkTopologySchema.parse({ network: 'n', readAt: 'x', sandboxes: [], ...t, errors: [] })).not.toThrow();
  });

  it('no recorded result (a record without the run trace): the picture is drawn, without owners', () => {
    const t = buildTopology(raw, [pod('ptpx1', noOwners())]);
    expect(t.edges.map((e) => e.kind)).toEqual(['veth', 'route']);
    expect(t.edges.every((e) => e.owner === undefined)).toBe(true);
  });
});

describe('written by hand (no such links on the recording host): vlan, ipvlan, vrf', () => {
  const hostLinks = parseLinks(
    JSON.stringify([
      { ifindex: 1, ifname: 'lo', flags: ['LOOPBACK', 'UP'], operstate: 'UNKNOWN' },
      { ifindex: 2, ifname: 'eno1', flags: ['UP'], operstate: 'UP', address: '52:54:00:00:00:01' },
    ]),
  );
  const podLinks = parseLinks(
    JSON.stringify([
      { ifindex: 1, ifname: 'lo', flags: ['LOOPBACK', 'UP'], operstate: 'UNKNOWN' },
      {
        ifindex: 5,
        link_index: 2,
        link_netnsid: 0,
        ifname: 'eth0',
        flags: ['UP'],
        operstate: 'UP',
        linkinfo: { info_kind: 'vlan', info_data: { protocol: '802.1Q', id: 100 } },
        master: 'blue',
      },
      {
        ifindex: 6,
        link_index: 2,
        link_netnsid: 0,
        ifname: 'eth1',
        flags: ['UP'],
        operstate: 'UNKNOWN',
        linkinfo: { info_kind: 'ipvlan', info_data: { mode: 'l2' } },
      },
      { ifindex: 7, ifname: 'blue', flags: ['UP'], operstate: 'UP', linkinfo: { info_kind: 'vrf', info_data: { table: 1001 } } },
    ]),
  );
  const owners = ownersFromTrace([
    pluginAdd('vl', 0, 'vlan', { master: 'eno1', vlanId: 100 }, [{ name: 'eth0', sandbox: '/run/netns/h' }]),
    pluginAdd('vl', 1, 'vrf', { vrfname: 'blue' }, [
      { name: 'eth0', sandbox: '/run/netns/h' },
      { name: 'blue', sandbox: '/run/netns/h' },
    ]),
    pluginAdd('ipv', 0, 'ipvlan', { master: 'eno1' }, [{ name: 'eth1', sandbox: '/run/netns/h' }]),
  ]);
  const t = buildTopology(
    { host: { links: hostLinks, routes: [], bridgePorts: [], ingressFilters: [] }, pods: { '/run/netns/h': podLinks }, errors: [] },
    [{ sandboxId: 'h', netnsPath: '/run/netns/h', owners }],
  );

  it('vlan and ipvlan lead to their parent with the vlan id and mode; the vrf member to its vrf', () => {
    expect(t.edges).toEqual([
      { from: 'pod:h:eth0', to: 'host:eno1', kind: 'parent', detail: 'vlan id 100', owner: { plugin: 'vlan', network: 'vl', index: 0 } },
      { from: 'pod:h:eth0', to: 'pod:h:blue', kind: 'vrf-port', owner: { plugin: 'vrf', network: 'vl', index: 1 } },
      { from: 'pod:h:eth1', to: 'host:eno1', kind: 'parent', detail: 'ipvlan l2', owner: { plugin: 'ipvlan', network: 'ipv', index: 0 } },
    ]);
    expect(t.nodes.find((n) => n.id === 'host:eno1')).toMatchObject({ kind: 'host-link', netns: 'host' });
    expect(t.nodes.find((n) => n.id === 'pod:h:eth0')).toMatchObject({ vlanId: 100, master: 'blue' });
  });
});
