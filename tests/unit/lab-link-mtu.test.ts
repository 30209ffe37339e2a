/**
 * The lab's link MTUs: every link a run created (its netns's interfaces, the host links that appeared with ADD) with
 * its MTU, and a warning when the run's interface has a larger MTU than a host link on its path (its host veth, that
 * veth's bridge); links that were there before ADD are not the run's.
 */
import { describe, expect, it } from 'vitest';
import { linkMtus } from '../../electron/engine/lab/link-mtu';
import { emptyWatched, type WatchedLink } from '../../electron/engine/lab/kernel';

const link = (over: Partial<WatchedLink> & { name: string; ifindex: number }): WatchedLink => ({ up: true, ...over });

describe('lab link MTUs', () => {
  const before = { ...emptyWatched(), hostLinks: [link({ name: 'eth0', ifindex: 2, mtu: 1500 })] };
  const after = (vethMtu: number, bridgeMtu: number) => ({
    ...emptyWatched(),
    hostLinks: [
      link({ name: 'eth0', ifindex: 2, mtu: 1500 }),
      link({ name: 'plbr0', ifindex: 9, mtu: bridgeMtu, kind: 'bridge' }),
      link({ name: 'veth1234', ifindex: 10, mtu: vethMtu, kind: 'veth', master: 'plbr0' }),
    ],
    netnsLinks: [link({ name: 'lo', ifindex: 1, mtu: 65536 }), link({ name: 'eth0', ifindex: 3, mtu: 1500, kind: 'veth' })],
  });

  it('lists the links the run created with their MTU, and warns of none when the path is as wide as the pod', () => {
    const r = linkMtus(before, after(1500, 1500), 'eth0');
    expect(r.links).toEqual([
      { where: 'netns', name: 'eth0', kind: 'veth', mtu: 1500 },
      { where: 'host', name: 'plbr0', kind: 'bridge', mtu: 1500 },
      { where: 'host', name: 'veth1234', kind: 'veth', master: 'plbr0', mtu: 1500 },
    ]);
    expect(r.warnings).toEqual([]);
  });

  it("warns when the pod's MTU exceeds its host veth or bridge, naming each", () => {
    const r = linkMtus(before, after(1400, 1400), 'eth0');
    expect(r.warnings).toHaveLength(2);
    expect(r.warnings[0]).toContain("the pod's eth0 has MTU 1500, more than host bridge plbr0 on its path (MTU 1400)");
    expect(r.warnings[1]).toContain('host veth veth1234');
  });
});
