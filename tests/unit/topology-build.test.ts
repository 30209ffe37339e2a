/** The topology picture from `ip -j -d addr` / `bridge -j link` output (shapes as iproute2 6.1 prints them). */
import { describe, expect, it } from 'vitest';
import { buildTopology } from '../../electron/engine/topology/build';
import type { RawTopology } from '../../electron/engine/topology/reader';

const raw: RawTopology = {
  host: [
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
  ],
  bridgePorts: [
    { ifindex: 9, ifname: 'veth1234', master: 'pst2-u', state: 'forwarding', hairpin: true },
    { ifindex: 8, ifname: 'vethdecoy', master: 'pst2-u', state: 'forwarding', hairpin: false },
  ],
  pods: {
    '/run/netns/a': [
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
    ],
  },
  errors: [],
};

describe('buildTopology', () => {
  const t = buildTopology(raw, [
    { sandboxId: 'a'.repeat(64), netnsPath: '/run/netns/a', hostInterfaces: ['pst2-u', 'veth1234', 'bwp1234'] },
  ]);
  const key = (k: string) => t.nodes.find((n) => n.key === k)!;

  it('follows eth0 to the host veth whose ifindex the kernel names as its peer, then to the bridge and the host', () => {
    const pod = `pod:${'a'.repeat(64)}:eth0`;
    expect(t.edges).toEqual(
      expect.arrayContaining([
        { from: pod, to: 'host:veth1234', kind: 'veth' },
        { from: 'host:veth1234', to: 'host:pst2-u', kind: 'bridge-port' },
        { from: 'host:pst2-u', to: 'host', kind: 'host-stack' },
        { from: 'host:veth1234', to: 'host:bwp1234', kind: 'ifb-redirect' },
      ]),
    );
    expect(t.nodes.some((n) => n.name === 'vethdecoy')).toBe(false);
  });

  it('carries addresses, MAC, MTU, state, hairpin and bridge membership as read', () => {
    expect(key(`pod:${'a'.repeat(64)}:eth0`)).toMatchObject({
      kind: 'pod-if',
      namespace: 'pod',
      mac: 'cc:00:00:00:00:03',
      mtu: 1500,
      state: 'UP',
      adminUp: true,
      addresses: [
        { family: 4, address: '10.225.0.5', prefixLen: 24, scope: 'global' },
        { family: 6, address: 'fe80::1', prefixLen: 64, scope: 'link' },
      ],
    });
    expect(key('host:veth1234')).toMatchObject({
      kind: 'host-veth',
      master: 'pst2-u',
      hairpin: true,
      portState: 'forwarding',
      sandboxId: 'a'.repeat(64),
    });
    expect(key('host:pst2-u')).toMatchObject({ kind: 'bridge', addresses: [{ address: '10.225.0.1' }] });
    expect(key('host:bwp1234')).toMatchObject({ kind: 'ifb' });
  });
});
