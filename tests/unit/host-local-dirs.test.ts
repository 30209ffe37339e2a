/** Where host-local keeps a network's reservations: `<dataDir>/<network name>`, its own default when none is set. */
import { describe, expect, it } from 'vitest';
import { hostLocalDirs, type CniNetworkView } from '../../shared/domain/cni';

const net = (name: string, ipam: Record<string, unknown> | undefined, type = 'bridge'): CniNetworkView => ({
  name,
  cniVersion: '1.0.0',
  ifName: 'eth0',
  builtin: false,
  disableCheck: false,
  plugins: [
    { type, capabilities: [], raw: { type, ...(ipam ? { ipam } : {}) } },
    { type: 'portmap', capabilities: ['portMappings'], raw: {} },
  ],
});

describe('host-local stores of the loaded networks', () => {
  it("uses the conflist's dataDir, else host-local's default, keyed by the network's name", () => {
    expect(
      hostLocalDirs([
        net('a', { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }]] }),
        net('b', { type: 'host-local', dataDir: '/tmp/ipam/' }, 'ptp'),
        net('c', { type: 'dhcp' }),
        net('lo', undefined, 'loopback'),
      ]),
    ).toEqual([
      { network: 'a', plugin: 'bridge', dir: '/var/lib/cni/networks/a', defaulted: true },
      { network: 'b', plugin: 'ptp', dir: '/tmp/ipam/b', defaulted: false },
    ]);
  });
});
