import { describe, expect, it } from 'vitest';
import { linkMtuRows } from './link-mtu';

describe('lab links with their MTU', () => {
  it("puts the run's interface first and marks the host links narrower than it (a black hole for full-size packets)", () => {
    const { rows, interfaceMtu } = linkMtuRows({
      ifName: 'eth0',
      linkMtus: [
        { where: 'host', name: 'veth1a2b', kind: 'veth', master: 'lab0', mtu: 1400 },
        { where: 'netns', name: 'eth1', kind: 'veth', mtu: 1500 },
        { where: 'netns', name: 'eth0', kind: 'veth', mtu: 1500 },
        { where: 'host', name: 'lab0', kind: 'bridge', mtu: 1500 },
      ],
    });
    expect(interfaceMtu).toBe(1500);
    expect(rows.map((r) => [r.where, r.name, r.runInterface, r.narrower])).toEqual([
      ['netns', 'eth0', true, false],
      ['netns', 'eth1', false, false],
      ['host', 'veth1a2b', false, true],
      ['host', 'lab0', false, false],
    ]);
  });

  it("marks nothing when the run's interface was not read, and an older record has no rows", () => {
    expect(linkMtuRows({ ifName: 'eth0', linkMtus: [{ where: 'host', name: 'v', mtu: 1200 }] }).rows[0]!.narrower).toBe(false);
    expect(linkMtuRows({ ifName: 'eth0' })).toEqual({ rows: [] });
  });
});
