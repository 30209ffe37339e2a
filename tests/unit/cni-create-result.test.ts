import { describe, expect, it } from 'vitest';
import type { CniResult } from '../../shared/domain/cni';
import { createResult } from '../../electron/engine/cni/create-result';

const LO: CniResult = {
  cniVersion: '1.0.0',
  interfaces: [{ name: 'lo', mac: '00:00:00:00:00:00', sandbox: '/n' }],
  ips: [
    { address: '127.0.0.1/8', interface: 0 },
    { address: '::1/128', interface: 0 },
  ],
  dns: {},
};
const BRIDGE: CniResult = {
  cniVersion: '1.0.0',
  interfaces: [
    { name: 'cni0', mac: 'aa' },
    { name: 'veth1', mac: 'bb' },
    { name: 'eth0', mac: 'cc', sandbox: '/n' },
  ],
  ips: [
    { address: '10.88.0.5/16', gateway: '10.88.0.1', interface: 2 },
    { address: '2001:db8::5/64', interface: 2 },
  ],
  routes: [{ dst: '0.0.0.0/0' }],
  dns: { nameservers: ['10.96.0.10'] },
};

describe('go-cni createResult', () => {
  it.each<[string, CniResult[], ReturnType<typeof createResult>]>([
    ['no results still has eth0', [], { interfaces: { eth0: { ipConfigs: [] } }, routes: [], dns: [] }],
    [
      'lo + bridge: per-interface IPs without prefix, CNI order, one dns per network',
      [LO, BRIDGE],
      {
        interfaces: {
          eth0: { mac: 'cc', sandbox: '/n', ipConfigs: [{ ip: '10.88.0.5', gateway: '10.88.0.1' }, { ip: '2001:db8::5' }] },
          lo: { mac: '00:00:00:00:00:00', sandbox: '/n', ipConfigs: [{ ip: '127.0.0.1' }, { ip: '::1' }] },
          cni0: { mac: 'aa', ipConfigs: [] },
          veth1: { mac: 'bb', ipConfigs: [] },
        },
        routes: [{ dst: '0.0.0.0/0' }],
        dns: [{}, { nameservers: ['10.96.0.10'] }],
      },
    ],
    [
      'an IP without interface index lands on eth0',
      [{ cniVersion: '1.0.0', ips: [{ address: '10.1.0.2/24', gateway: '10.1.0.1' }], routes: [{ dst: '10.0.0.0/8' }] }],
      {
        interfaces: { eth0: { ipConfigs: [{ ip: '10.1.0.2', gateway: '10.1.0.1' }] } },
        routes: [{ dst: '10.0.0.0/8' }],
        dns: [{}],
      },
    ],
    [
      'a later network replaces an interface of the same name, IPs included',
      [BRIDGE, { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', mac: 'dd' }], routes: [{ dst: '::/0' }] }],
      {
        interfaces: { eth0: { mac: 'dd', ipConfigs: [] }, cni0: { mac: 'aa', ipConfigs: [] }, veth1: { mac: 'bb', ipConfigs: [] } },
        routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
        dns: [{ nameservers: ['10.96.0.10'] }, {}],
      },
    ],
  ])('%s', (_n, results, want) => {
    expect(createResult(results)).toEqual(want);
  });

  it('an interface index past the list is an invalid result, not a crash', () => {
    expect(() =>
      createResult([{ cniVersion: '1.0.0', interfaces: [{ name: 'eth0' }], ips: [{ address: '10.0.0.2/8', interface: 1 }] }]),
    ).toThrow(/invalid interface config: .*: invalid result/);
  });
});
