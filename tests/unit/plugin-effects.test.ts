/**
 * Each plugin's effect from the recorded ADD calls and one live read: the rules, values and links are the kernel's
 * (shapes recorded from the real bridge+firewall+tuning+sbr pod), each with its owner, compared with the config.
 */
import { describe, expect, it } from 'vitest';
import { effectCalls, effectQuery, pluginEffects } from '../../electron/engine/pods/plugin-effects';
import type { RawLiveNetwork } from '../../electron/engine/netns/live-reader';
import type { TraceEntry } from '../../shared/domain/trace';

const NET = 'psls-pod';
function add(index: number, type: string, conf: Record<string, unknown>, exitCode = 0): TraceEntry {
  return {
    seq: index,
    phase: 'run',
    step: 'cni.plugin',
    label: `ADD ${type}`,
    startedAt: '2026-11-25T23:41:20.000Z',
    durationMs: 1,
    ok: exitCode === 0,
    plugin: {
      network: NET,
      ifName: 'eth0',
      type,
      verb: 'ADD',
      index,
      env: {},
      stdin: JSON.stringify({ type, ...conf }),
      stdout: '',
      stderr: '',
      exitCode,
    },
  };
}
const networks = [{ network: NET, ifName: 'eth0', result: { cniVersion: '1.0.0', ips: [{ address: '10.81.0.2/24' }] } }];
const trace = [
  add(0, 'bridge', { bridge: NET }),
  add(1, 'firewall', {}),
  add(2, 'tuning', { mtu: 1450, mac: '0a:58:0a:51:00:99', sysctl: { 'net.ipv4.conf.eth0.proxy_arp': '1' }, promisc: true }),
  add(3, 'sbr', {}),
];
const raw = (over: Partial<RawLiveNetwork> = {}): RawLiveNetwork => ({
  interfaces: [{ name: 'eth0', ifindex: 2, mac: '0a:58:0a:51:00:99', mtu: 1450, state: 'UP', kind: 'veth', addresses: [] }],
  routes: [],
  hostLinkKinds: {},
  qdiscs: {},
  nat: { v4: [], v6: [] },
  rules: [
    { family: 4, priority: 0, from: 'all', table: 'local' },
    { family: 4, priority: 32765, from: '10.81.0.2', table: '100' },
  ],
  tableRoutes: [{ family: 4, dst: 'default', gateway: '10.81.0.1', dev: 'eth0', table: '100' }],
  sysctls: { 'net.ipv4.conf.eth0.proxy_arp': '1' },
  filter: {
    v4: [
      '-A CNI-FORWARD -m comment --comment "CNI firewall plugin admin overrides" -j CNI-ADMIN',
      '-A CNI-FORWARD -d 10.81.0.2/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A CNI-FORWARD -s 10.81.0.2/32 -j ACCEPT',
      '-A CNI-FORWARD -s 10.81.0.20/32 -j ACCEPT',
    ],
    v6: [],
  },
  errors: [],
  ...over,
});

describe('plugin effects', () => {
  it("asks the live read for what the plugins that ran need: rules for sbr, the filter table for firewall, tuning's sysctls", () => {
    expect(effectQuery(effectCalls(trace, networks))).toEqual({
      rules: true,
      sysctls: ['net.ipv4.conf.eth0.proxy_arp'],
      filter: true,
    });
    // a failed ADD of a plugin did nothing to read
    expect(effectCalls([add(1, 'firewall', {}, 1)], networks)).toEqual([]);
  });

  it("firewall: the CNI-FORWARD rules naming the pod's address as a whole word (not 10.81.0.20), with owner", () => {
    const fw = pluginEffects(effectCalls(trace, networks), raw()).filter((e) => e.plugin === 'firewall');
    expect(fw.map((e) => e.what)).toEqual([
      'iptables filter -A CNI-FORWARD -d 10.81.0.2/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      'iptables filter -A CNI-FORWARD -s 10.81.0.2/32 -j ACCEPT',
    ]);
    expect(fw[0]).toMatchObject({ network: NET, ifName: 'eth0', source: 'kernel', matches: true });
    const none = pluginEffects(effectCalls(trace, networks), raw({ filter: { v4: [], v6: [] } })).find((e) => e.plugin === 'firewall');
    expect(none).toMatchObject({ matches: false, what: 'no rule in CNI-FORWARD or CNI-ADMIN names 10.81.0.2' });
  });

  it('tuning: sysctl, MAC and MTU from the kernel compared with the config; promisc from the config only', () => {
    const t = pluginEffects(effectCalls(trace, networks), raw({ sysctls: { 'net.ipv4.conf.eth0.proxy_arp': '0' } })).filter(
      (e) => e.plugin === 'tuning',
    );
    expect(t.map((e) => [e.what, e.source, e.matches])).toEqual([
      ['net.ipv4.conf.eth0.proxy_arp = 0', 'kernel', false],
      ['eth0 mac 0a:58:0a:51:00:99', 'kernel', true],
      ['eth0 mtu 1450', 'kernel', true],
      ['eth0 promisc on', 'config', undefined],
    ]);
    expect(t[0]!.note).toBe('the config asks for 1');
  });

  it("sbr: the rule from the pod's address and its table's routes; none is a mismatch", () => {
    const s = pluginEffects(effectCalls(trace, networks), raw()).filter((e) => e.plugin === 'sbr');
    expect(s.map((e) => e.what)).toEqual(['ipv4 32765: from 10.81.0.2 lookup 100', 'ipv4 default via 10.81.0.1 dev eth0 table 100']);
    expect(pluginEffects(effectCalls(trace, networks), raw({ rules: [] })).find((e) => e.plugin === 'sbr')).toMatchObject({
      kind: 'policy-rule',
      matches: false,
    });
  });

  it("host-device: the pod's interface, its host name from the config", () => {
    const calls = effectCalls([add(0, 'host-device', { device: 'pls-hd0' })], networks);
    const [e] = pluginEffects(calls, raw());
    expect(e).toMatchObject({ plugin: 'host-device', kind: 'link', source: 'kernel' });
    expect(e!.what).toBe('eth0 (veth) mac 0a:58:0a:51:00:99 mtu 1450 state UP: host link pls-hd0, moved into the pod');
  });
});
