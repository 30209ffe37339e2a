import { describe, expect, it } from 'vitest';
import { parsePluginResult, parseVersionedResult, resultAsVersion, toV1View } from '../../electron/engine/cni/result-convert';

const V1 = {
  cniVersion: '1.1.0',
  interfaces: [
    { name: 'cni0', mac: '0a:58:0a:58:00:01' },
    { name: 'eth0', mac: '0a:58:0a:58:00:05', sandbox: '/var/run/netns/x', mtu: 1450, pciID: '0000:00:1f.6' },
  ],
  ips: [
    { address: '10.88.0.5/16', gateway: '10.88.0.1', interface: 1 },
    { address: '2001:db8::5/64', gateway: '2001:db8::1', interface: 1 },
  ],
  routes: [{ dst: '0.0.0.0/0', gw: '10.88.0.1', mtu: 1400, priority: 10 }, { dst: '::/0' }],
  dns: { nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] },
};

describe('result parsing and version conversion (pkg/types/020, 040, 100)', () => {
  it.each([
    ['1.1.0 → 1.0.0 keeps 1.x fields', '1.1.0', '1.0.0', { ...V1, cniVersion: '1.0.0' }],
    [
      '1.1.0 → 0.4.0 adds ips[].version and drops 1.x interface fields',
      '1.1.0',
      '0.4.0',
      {
        cniVersion: '0.4.0',
        interfaces: [
          { name: 'cni0', mac: '0a:58:0a:58:00:01' },
          { name: 'eth0', mac: '0a:58:0a:58:00:05', sandbox: '/var/run/netns/x' },
        ],
        ips: [
          { version: '4', address: '10.88.0.5/16', gateway: '10.88.0.1', interface: 1 },
          { version: '6', address: '2001:db8::5/64', gateway: '2001:db8::1', interface: 1 },
        ],
        routes: V1.routes,
        dns: V1.dns,
      },
    ],
    [
      '1.1.0 → 0.2.0 keeps the first IP per family with its family routes',
      '1.1.0',
      '0.2.0',
      {
        cniVersion: '0.2.0',
        ip4: { ip: '10.88.0.5/16', gateway: '10.88.0.1', routes: [{ dst: '0.0.0.0/0', gw: '10.88.0.1' }] },
        ip6: { ip: '2001:db8::5/64', gateway: '2001:db8::1', routes: [{ dst: '::/0' }] },
        dns: V1.dns,
      },
    ],
  ])('%s', (_n, from, to, want) => {
    const parsed = parseVersionedResult({ ...V1, cniVersion: from });
    expect(resultAsVersion(parsed.result, to)).toEqual(want);
  });

  it.each([
    [
      '0.3.1 drops ips[].version going to 1.0.0',
      { cniVersion: '0.3.1', interfaces: [{ name: 'eth0', sandbox: '/n' }], ips: [{ version: '4', address: '10.1.0.2/24', interface: 0 }] },
      { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/n' }], ips: [{ address: '10.1.0.2/24', interface: 0 }], dns: {} },
    ],
    [
      '0.4.0 delegated IPAM result without interfaces',
      { cniVersion: '0.4.0', ips: [{ version: '6', address: 'fd00::2/64', gateway: 'fd00::1' }], routes: [{ dst: '::/0' }] },
      { cniVersion: '1.0.0', ips: [{ address: 'fd00::2/64', gateway: 'fd00::1' }], routes: [{ dst: '::/0' }], dns: {} },
    ],
    [
      '0.2.0 ip4/ip6 blocks become ips without interface, routes concatenated',
      {
        cniVersion: '0.2.0',
        ip4: { ip: '10.1.0.2/24', gateway: '10.1.0.1', routes: [{ dst: '0.0.0.0/0' }] },
        ip6: { ip: 'fd00::2/64' },
        dns: { nameservers: ['1.1.1.1'] },
      },
      {
        cniVersion: '1.0.0',
        ips: [{ address: '10.1.0.2/24', gateway: '10.1.0.1' }, { address: 'fd00::2/64' }],
        routes: [{ dst: '0.0.0.0/0' }],
        dns: { nameservers: ['1.1.1.1'] },
      },
    ],
    [
      '1.0.0 stays 1.0.0',
      { cniVersion: '1.0.0', ips: [{ address: '10.1.0.2/24' }] },
      { cniVersion: '1.0.0', ips: [{ address: '10.1.0.2/24' }], dns: {} },
    ],
    [
      '1.1.0 keeps its version in the 1.x view',
      { cniVersion: '1.1.0', interfaces: [{ name: 'eth0', socketPath: '/s' }] },
      { cniVersion: '1.1.0', interfaces: [{ name: 'eth0', socketPath: '/s' }], dns: {} },
    ],
  ])('1.x view: %s', (_n, raw, want) => {
    expect(toV1View(parseVersionedResult(raw))).toEqual(want);
  });

  it('fills a missing cniVersion from the config (libcni fixupResultVersion)', () => {
    expect(parsePluginResult('{"ips":[{"version":"4","address":"10.0.0.2/8"}]}', '0.4.0').version).toBe('0.4.0');
    expect(parsePluginResult('{"cniVersion":"","ips":[]}', '1.0.0').version).toBe('1.0.0');
    expect(parsePluginResult('{"ip4":{"ip":"10.0.0.2/8"}}', '').version).toBe('0.1.0');
    expect(parsePluginResult('null', '1.0.0').result).toEqual({ cniVersion: '1.0.0', dns: {} });
  });

  it.each([
    ['not JSON', 'oops', 'failed to unmarshal raw result'],
    ['an array', '[1]', 'failed to unmarshal raw result: not a JSON object'],
    ['an unknown version', '{"cniVersion":"0.5.0"}', 'unsupported CNI result version "0.5.0"'],
    ['a bad CIDR', '{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.1"}]}', 'ips[0].address: invalid CIDR address: 10.0.0.1'],
    ['a prefix too long', '{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.1/33"}]}', 'invalid CIDR address'],
    ['a bad gateway', '{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.1/8","gateway":"x"}]}', 'ips[0].gateway: invalid IP address "x"'],
    [
      'a string interface index',
      '{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.1/8","interface":"0"}]}',
      'ips[0].interface: expected an integer',
    ],
    ['ips not an array', '{"cniVersion":"1.0.0","ips":{}}', 'result.ips: expected an array of objects'],
    ['a route without dst', '{"cniVersion":"1.0.0","routes":[{"gw":"10.0.0.1"}]}', 'routes[0].dst: missing'],
    ['dns of the wrong type', '{"cniVersion":"1.0.0","dns":{"nameservers":"8.8.8.8"}}', 'dns.nameservers: expected an array of strings'],
  ])('rejects %s', (_n, stdout, message) => {
    expect(() => parsePluginResult(stdout, '1.0.0')).toThrow(message);
  });

  it('refuses to down-convert a result without IPs to 0.2.0', () => {
    expect(() => resultAsVersion({ cniVersion: '1.0.0', interfaces: [{ name: 'lo' }] }, '0.2.0')).toThrow(
      'cannot convert: no valid IP addresses',
    );
  });
});
