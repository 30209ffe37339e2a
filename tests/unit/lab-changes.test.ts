/**
 * What a lab run changed in place, over watched values recorded from real runs on this host (Debian's plugins 1.1.1):
 * host-device moving a veth end into the run's netns and back DOWN with proxy_arp reset; tuning's sysctls on a new
 * eth0; the bridge plugin's settings on its bridge. Trimmed to the links and sysctls that matter.
 */
import { describe, expect, it } from 'vitest';
import { changeOwners, defaultOf, kernelWatch, runChanges } from '../../electron/engine/lab/changes';
import { interfaceSysctls, ruleLine, routeLines, type WatchedLink, type WatchedState } from '../../electron/engine/lab/kernel';
import { relates } from '../../electron/engine/lab/verdict';
import type { RunNames } from '../../electron/engine/lab/names';
import { afterDelReport } from '../../shared/domain/lab';

const link = (name: string, mac: string, up: boolean, extra: Partial<WatchedLink> = {}): WatchedLink => ({
  name,
  ifindex: 40,
  mac,
  kind: 'veth',
  state: up ? 'UP' : 'DOWN',
  up,
  mtu: 1500,
  ...extra,
});
const state = (s: Partial<WatchedState>): WatchedState => ({ hostLinks: [], netnsLinks: [], hostSysctls: {}, netnsSysctls: {}, ...s });
const lo = link('lo', '00:00:00:00:00:00', true, { kind: undefined, state: 'UNKNOWN', mtu: 65536 });
const peer = link('pls-hd1', '5e:1c:3a:0b:77:02', true);
const HD_MAC = '5e:1c:3a:0b:77:01';

describe('host-device: a host link moved into the run and back', () => {
  const owners = changeOwners([{ type: 'host-device', device: 'pls-hd0' }], 'cni0');
  const before = state({
    hostLinks: [link('pls-hd0', HD_MAC, true), peer],
    netnsLinks: [lo],
    hostSysctls: { 'net.ipv4.conf.pls-hd0.proxy_arp': '1', 'net.ipv4.ip_forward': '1' },
  });
  const afterAdd = state({
    hostLinks: [{ ...peer, state: 'LOWERLAYERDOWN' }],
    netnsLinks: [lo, link('eth0', HD_MAC, true)],
    hostSysctls: { 'net.ipv4.ip_forward': '1' },
  });
  const afterDel = state({
    hostLinks: [link('pls-hd0', HD_MAC, false), peer],
    netnsLinks: [lo],
    hostSysctls: { 'net.ipv4.conf.pls-hd0.proxy_arp': '0', 'net.ipv4.ip_forward': '1' },
  });

  it('the conflist names the device: it is watched, with its sysctls', () => {
    expect(kernelWatch(owners).hostLinks).toEqual(['pls-hd0']);
  });

  it("ADD: moved into the run's netns as eth0 (found there by its MAC), owned by host-device; the peer's state is not the run's", () => {
    const { changedByAdd } = runChanges(before, afterAdd, afterDel, owners);
    expect(changedByAdd).toEqual([
      {
        where: 'host',
        kind: 'link',
        subject: 'pls-hd0',
        field: 'netns',
        before: 'host',
        after: "the run's netns",
        owner: 'host-device',
        text: "host link pls-hd0: moved into the run's netns as eth0",
      },
    ]);
  });

  it('after DEL: back DOWN and with proxy_arp reset, each before → after, and each a leak in the report', () => {
    const { changedAfterDel } = runChanges(before, afterAdd, afterDel, owners);
    expect(changedAfterDel.map((c) => c.text)).toEqual([
      'host link pls-hd0: state UP → DOWN',
      'host link pls-hd0: administratively up → down',
      'host sysctl net.ipv4.conf.pls-hd0.proxy_arp 1 → 0',
    ]);
    expect(changedAfterDel.find((c) => c.field === 'state')).toMatchObject({ before: 'UP', after: 'DOWN', owner: 'host-device' });
    expect(afterDelReport({ leftAfterDel: [], changedAfterDel }).every((r) => r.leak)).toBe(true);
  });

  it('a link that comes back under another name is followed by its MAC: renamed, not gone', () => {
    const renamed = state({ ...afterDel, hostLinks: [link('dev7', HD_MAC, true), peer] });
    const { changedAfterDel } = runChanges(before, afterAdd, renamed, owners);
    expect(changedAfterDel.map((c) => c.text)).toContain('host link pls-hd0: renamed pls-hd0 → dev7');
  });

  it('a link found nowhere after DEL is reported gone', () => {
    const gone = state({ ...afterDel, hostLinks: [peer] });
    expect(runChanges(before, afterAdd, gone, owners).changedAfterDel[0]!.text).toBe(
      'host link pls-hd0: gone (was UP): in no namespace the lab can see',
    );
  });

  it('without the conflist naming it, a host link ADD moved into the netns is still followed (found by MAC)', () => {
    const anon = changeOwners([{ type: 'host-device', hwaddr: HD_MAC }], 'cni0');
    const { changedByAdd, changedAfterDel } = runChanges(before, afterAdd, afterDel, anon);
    expect(changedByAdd[0]).toMatchObject({ subject: 'pls-hd0', field: 'netns', owner: 'host-device' });
    expect(changedAfterDel.map((c) => c.field)).toEqual(['state', 'up', 'value']);
  });

  it("another host link changing at the same time (another pod's) is not the run's", () => {
    const busy = state({ ...afterDel, hostLinks: [...afterDel.hostLinks, link('vethother', '5e:00:00:00:00:09', false)] });
    const withOther = state({ ...before, hostLinks: [...before.hostLinks, link('vethother', '5e:00:00:00:00:09', true)] });
    expect(runChanges(withOther, afterAdd, busy, owners).changedAfterDel.some((c) => c.subject === 'vethother')).toBe(false);
  });
});

describe("tuning and bridge: sysctls of a new interface against the netns's defaults", () => {
  const owners = changeOwners(
    [
      { type: 'bridge', bridge: 'psls-lab' },
      { type: 'tuning', sysctl: { 'net.ipv4.conf.eth0.proxy_arp': '1', 'net.ipv4.conf.eth0.arp_ignore': '2' } },
    ],
    'cni0',
  );
  const before = state({
    netnsLinks: [lo],
    hostSysctls: { 'net.ipv4.ip_forward': '0', 'net.ipv6.conf.default.accept_ra': '1' },
    netnsSysctls: {
      'net.ipv4.conf.default.proxy_arp': '0',
      'net.ipv4.conf.default.arp_ignore': '0',
      'net.ipv4.conf.default.rp_filter': '2',
      'net.ipv4.conf.lo.rp_filter': '2',
    },
  });
  const afterAdd = state({
    hostLinks: [link('psls-lab', '8a:11:22:33:44:55', true, { kind: 'bridge' })],
    netnsLinks: [lo, link('eth0', '0a:58:0a:50:00:99', true, { mtu: 1400 })],
    hostSysctls: { 'net.ipv4.ip_forward': '1', 'net.ipv6.conf.default.accept_ra': '1', 'net.ipv6.conf.psls-lab.accept_ra': '0' },
    netnsSysctls: {
      ...before.netnsSysctls,
      'net.ipv4.conf.eth0.proxy_arp': '1',
      'net.ipv4.conf.eth0.arp_ignore': '2',
      'net.ipv4.conf.eth0.rp_filter': '2',
    },
  });
  const afterDel = state({ ...afterAdd, netnsLinks: [lo], netnsSysctls: before.netnsSysctls });

  it("watches tuning's names and their defaults, and the bridge", () => {
    expect(kernelWatch(owners)).toEqual({
      hostLinks: ['psls-lab'],
      sysctls: [
        'net.ipv4.conf.eth0.proxy_arp',
        'net.ipv4.conf.eth0.arp_ignore',
        'net.ipv4.conf.default.proxy_arp',
        'net.ipv4.conf.default.arp_ignore',
      ],
    });
    expect(defaultOf('net.ipv6.conf.eth0.accept_ra')).toBe('net.ipv6.conf.default.accept_ra');
    expect(defaultOf('net.ipv4.ip_forward')).toBeUndefined();
    expect(interfaceSysctls('eth0.100')).toContain('net.ipv4.conf.eth0/100.rp_filter');
  });

  it("ADD: tuning's values from the default, owned by tuning; a value equal to the default is no change", () => {
    const { changedByAdd } = runChanges(before, afterAdd, afterDel, owners);
    const netns = changedByAdd.filter((c) => c.where === 'netns');
    expect(netns.map((c) => c.text)).toEqual([
      'sysctl net.ipv4.conf.eth0.arp_ignore 0 (default) → 2',
      'sysctl net.ipv4.conf.eth0.proxy_arp 0 (default) → 1',
    ]);
    expect(netns[1]).toMatchObject({ before: '0', beforeFrom: 'net.ipv4.conf.default.proxy_arp', after: '1', owner: 'tuning' });
  });

  it('after DEL: forwarding and the kept bridge stay changed by design, so nothing is a leak', () => {
    const { changedAfterDel } = runChanges(before, afterAdd, afterDel, owners);
    expect(changedAfterDel.map((c) => [c.text, c.owner])).toEqual([
      ['host sysctl net.ipv4.ip_forward 0 → 1', 'bridge'],
      ['host sysctl net.ipv6.conf.psls-lab.accept_ra 1 (default) → 0', 'bridge'],
    ]);
    expect(changedAfterDel.every((c) => c.why)).toBe(true);
    expect(afterDelReport({ leftAfterDel: [], changedAfterDel }).some((r) => r.leak)).toBe(false);
  });

  it('without any snapshot values (a reader that keeps lines only), no changes are claimed', () => {
    expect(runChanges(undefined, afterAdd, afterDel, owners)).toEqual({ changedByAdd: [], changedAfterDel: [] });
  });
});

describe('policy rules and tables in the snapshot and the after-DEL report', () => {
  it("sbr's rule and its table's routes as lines; the kernel's local table left out", () => {
    expect(ruleLine({ family: 4, priority: 32765, from: '10.80.1.2', table: '100' })).toBe('ipv4 32765: from 10.80.1.2 lookup 100');
    expect(ruleLine({ family: 6, priority: 200, from: 'all', fwmark: '0x10', action: 'blackhole' })).toBe(
      'ipv6 200: from all fwmark 0x10 blackhole',
    );
    expect(
      routeLines([
        { family: 4, table: '100', dst: 'default', gateway: '10.80.1.1', dev: 'eth0' },
        { family: 4, table: 'local', type: 'local', dst: '10.80.1.2', dev: 'eth0', scope: 'host' },
        { family: 4, table: 'main', type: 'blackhole', dst: '10.99.0.0/16' },
      ]),
    ).toEqual(['ipv4 default via 10.80.1.1 dev eth0 table 100', 'ipv4 blackhole 10.99.0.0/16']);
  });

  it("a rule created and left reads so, in the run's netns", () => {
    const report = afterDelReport({ leftAfterDel: [{ kind: 'netns-rule', what: 'ipv4 32765: from 10.80.1.2 lookup 100' }] });
    expect(report).toEqual([
      { text: "policy rule 'ipv4 32765: from 10.80.1.2 lookup 100' (in the run's netns) created and left", leak: true },
    ]);
  });

  it("host routes and rules are the run's when they go through its devices or name its addresses (ptp's host-side /32)", () => {
    const names = {
      containerId: 'c',
      hostVeths: ['veth1234'],
      bridges: [],
      podIps: ['10.80.4.7'],
      derived: { ifb: [], masqChain: 'CNI-x', dnatChain: 'CNI-DN-x' },
    } as unknown as RunNames;
    expect(relates('host-route', 'ipv4 10.80.4.7 dev veth1234 scope host', names, new Set())).toBe(true);
    expect(relates('host-rule', 'ipv4 100: from 10.80.4.7 lookup 100', names, new Set())).toBe(true);
    expect(relates('host-route', 'ipv4 10.80.4.70 dev vethother scope host', names, new Set())).toBe(false);
  });
});
