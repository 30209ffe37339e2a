import { describe, expect, it } from 'vitest';
import { PortMappingSchema } from '../../shared/domain/config';
import { analyzePortMappings, toCniPortMappings } from '../../shared/domain/portmap';
import { ipFamily, selectPodIPs } from '../../shared/domain/ip-selection';

const pm = (x: object) => PortMappingSchema.parse(x);

// containerd toCNIPortMappings: host_port <= 0 never reaches CNI; protocol lower-cased; host_ip verbatim.
describe('port mappings', () => {
  it.each([
    [
      { container_port: 80, host_port: 8080 },
      { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
    ],
    [
      { protocol: 1, container_port: 53, host_port: 5353, host_ip: '127.0.0.1' },
      { hostPort: 5353, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.1' },
    ],
    [
      { protocol: 2, container_port: 9, host_port: 9 },
      { hostPort: 9, containerPort: 9, protocol: 'sctp' },
    ],
    [
      { container_port: 0, host_port: 1 },
      { hostPort: 1, containerPort: 0, protocol: 'tcp' },
    ], // container_port is not validated (portmap rejects it)
  ])('%o ⇒ %o', (input, cni) => {
    expect(toCniPortMappings([pm(input)])).toEqual([cni]);
  });

  it.each([[0], [-1]])('host_port %i is dropped with a reason', (hostPort) => {
    const [d] = analyzePortMappings([pm({ container_port: 80, host_port: hostPort })]);
    expect(d!.passed).toBe(false);
    expect(d!.reason).toMatch(/not passed to CNI/);
    expect(toCniPortMappings([pm({ container_port: 80, host_port: hostPort })])).toEqual([]);
  });
});

// containerd selectPodIPs (docs/semantics.md#pod-ip-selection).
describe('selectPodIPs', () => {
  const v4 = '10.0.0.5';
  const v6 = 'fd00::5';
  const v4b = '10.0.0.6';
  const v6b = 'fd00::6';
  it.each([
    ['ipv4', [v4], v4, []],
    ['ipv6', [v4], v4, []], // one IP is primary whatever the preference
    ['ipv4', [v6, v4, v6b], v4, [v6, v6b]], // non-matching before it, then everything after
    ['ipv4', [v6, v4, v4b, v6b], v4, [v6, v4b, v6b]],
    ['ipv6', [v4, v6, v4b, v6b], v6, [v4, v4b, v6b]],
    ['ipv6', [v4, v4b], v4, [v4b]], // no IP of the family: first IP
    ['cni', [v6, v4], v6, [v4]],
    ['ipv4', ['::ffff:10.1.2.3', v6], '::ffff:10.1.2.3', [v6]], // IPv4-mapped counts as v4
  ] as const)('%s over %o ⇒ %s + %o', (pref, ips, primary, additional) => {
    const s = selectPodIPs([...ips], pref);
    expect(s.primary).toBe(primary);
    expect(s.additional).toEqual(additional);
    expect(s.reason).not.toBe('');
  });

  it('classifies families', () => {
    expect(ipFamily('10.1.1.1')).toBe(4);
    expect(ipFamily('::ffff:1.2.3.4')).toBe(4);
    expect(ipFamily('fd00::1')).toBe(6);
  });
});
