/**
 * DNS paths over the simulated network: one per nameserver of the pod's dns_config, the query sent from the pod's own
 * netns for the name asked; an answer (NXDOMAIN too) is reachable, a silent server fails the probe, REFUSED is refused;
 * the CLI's DNS group; the resolv.conf reader and the default name. The same with a real dnsmasq is in
 * tests/real/probe-dns-mtu-real.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import {
  dnsPaths,
  failingPaths,
  measuredByText,
  pathMeasuredBy,
  pathsByNetwork,
  probeSucceeded,
  type ProbePath,
} from '../../shared/domain/probe';
import { defaultDnsName, judgeDns, parseResolvConf } from '../../electron/engine/probe/dns';
import type { PlannedConnect } from '../../electron/engine/probe/plan';
import { unreachableNote } from '../../electron/engine/netns/probe-net';
import { describeProbe } from '../../electron/cli/commands/probe';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'dns', uid: `uid-${name}` }, ...extra };
}

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const answer = (rcode: string, answers: string[] = []) => ({
  kind: 'answer' as const,
  transport: 'udp' as const,
  rcode,
  answers,
  rttMs: 0.4,
});

describe('DNS paths (simulated)', () => {
  it('asks each nameserver of dns_config from the pod: the answering one is reachable with its records, the silent one fails the probe', async () => {
    t = await createTestEngine({ options: { probeOnReady: false } });
    t.probe.nameservers.set('10.77.0.53', answer('NOERROR', ['A 10.0.0.9']));
    const { id } = await t.engine.run({
      config: pod('a', { dns_config: { servers: ['10.77.0.53', '10.77.0.54'], searches: ['name.test'], options: ['ndots:2'] } }),
    });
    const r = await t.engine.probe(id);
    const dns = dnsPaths(r).map((d) => d.path);
    expect(dns.map((p) => [p.to, p.verdict, p.from, p.proto])).toEqual([
      ['10.77.0.53:53', 'reachable', 'pod', 'udp'],
      ['10.77.0.54:53', 'timeout', 'pod', 'udp'],
    ]);
    expect(dns[0]!.dns).toMatchObject({ server: '10.77.0.53', name: 'name.test', qtype: 'A', rcode: 'NOERROR', answers: ['A 10.0.0.9'] });
    expect(dns[0]!.note).toContain('A 10.0.0.9');
    // asked from inside the pod's netns, for the first search domain (no user-chosen name)
    const podNetns = (await t.engine.status(id)).netnsPath;
    expect(t.probe.queries.map((q) => [q.from, q.name])).toEqual([
      [podNetns, 'name.test'],
      [podNetns, 'name.test'],
    ]);
    expect(r.dns).toMatchObject({ source: 'dns_config', servers: ['10.77.0.53', '10.77.0.54'], searches: ['name.test'] });
    // the silent server fails the probe, named; DNS paths are their own group, not a network's
    expect(probeSucceeded(r)).toBe(false);
    expect(failingPaths(r).map((p) => p.to)).toEqual(['10.77.0.54:53']);
    expect(pathsByNetwork(r).flatMap((g) => g.paths.map((x) => x.path.kind))).not.toContain('dns');
    const text = describeProbe(r);
    expect(text).toMatch(/DNS \(nameservers from the pod's dns_config; asks A name\.test\)/);
    expect(text).toMatch(/timeout +dns +pod → 10\.77\.0\.54:53\/udp/);
    // the header says what the paths used: the connects and the DNS queries, not "TCP connect" alone
    expect(r.measuredBy).toBe('TCP connect, DNS query over UDP');
    expect(text.split('\n')[0]).toContain('by TCP connect, DNS query over UDP in');
  });

  it('a user-chosen name is asked instead; NXDOMAIN is an answer (reachable), REFUSED is refused', async () => {
    t = await createTestEngine({ options: { probeOnReady: false } });
    t.probe.nameservers.set('10.77.0.53', answer('NXDOMAIN'));
    t.probe.nameservers.set('10.77.0.55', answer('REFUSED'));
    const { id } = await t.engine.run({
      config: pod('b', { dns_config: { servers: ['10.77.0.53', '10.77.0.55'], searches: [], options: [] } }),
    });
    const r = await t.engine.probe(id, { dnsName: 'nothing.here.test' });
    const dns = dnsPaths(r).map((d) => d.path);
    expect(dns.map((p) => [p.verdict, p.dns?.rcode])).toEqual([
      ['reachable', 'NXDOMAIN'],
      ['refused', 'REFUSED'],
    ]);
    expect(dns[0]!.note).toMatch(/NXDOMAIN: nothing\.here\.test does not exist \(an answer/);
    expect(t.probe.queries.every((q) => q.name === 'nothing.here.test')).toBe(true);
  });

  it('reads nameservers, searches and options from a resolv.conf; the default name follows the searches', () => {
    expect(
      parseResolvConf('# generated\nnameserver 10.0.0.10\nnameserver fe80::1%eth0\nsearch a.test b.test\noptions ndots:5 edns0\n'),
    ).toEqual({ servers: ['10.0.0.10', 'fe80::1'], searches: ['a.test', 'b.test'], options: ['ndots:5', 'edns0'] });
    expect(defaultDnsName(['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'])).toEqual({
      name: 'kubernetes.default.svc.cluster.local',
      qtype: 'A',
    });
    expect(defaultDnsName(['corp.example.'])).toEqual({ name: 'corp.example', qtype: 'A' });
    expect(defaultDnsName([])).toEqual({ name: '.', qtype: 'NS' });
  });

  it('"measured by" names what each kind of path sent: TCP connects, DNS over UDP and TCP, DF-set echoes for the MTU', () => {
    const base = { from: 'pod', measured: true, note: '' } as const;
    const mtu = { pathMtu: 1500, interfaceMtu: 1500, blackHole: false, probes: 2, note: '' };
    const gw: ProbePath = { ...base, kind: 'gateway', to: '10.0.0.1:9', proto: 'tcp', verdict: 'reachable', mtu };
    const udp: ProbePath = {
      ...base,
      kind: 'dns',
      to: '10.0.0.53:53',
      proto: 'udp',
      verdict: 'timeout',
      dns: { server: '10.0.0.53', name: 'x', qtype: 'A' },
    };
    const truncated: ProbePath = {
      ...base,
      kind: 'dns',
      to: '10.0.0.54:53',
      proto: 'tcp',
      verdict: 'reachable',
      dns: { server: '10.0.0.54', name: 'x', qtype: 'A', transport: 'tcp', truncated: true, rcode: 'NOERROR' },
    };
    expect(pathMeasuredBy(gw)).toBe('TCP connect; DF-set ICMP echoes for the path MTU');
    expect(pathMeasuredBy(udp)).toBe('DNS query over UDP');
    expect(pathMeasuredBy(truncated)).toBe('DNS query over UDP, then TCP (the UDP answer was truncated)');
    expect(pathMeasuredBy({ ...gw, measured: false })).toBeUndefined();
    expect(measuredByText({ measuredBy: 'TCP connect', paths: [udp] })).toBe('DNS query over UDP');
    expect(measuredByText({ measuredBy: 'TCP connect', paths: [gw, udp, truncated] })).toBe(
      'TCP connect, DNS query over UDP and TCP, DF-set ICMP echoes for the path MTU',
    );
    // nothing measured: the report's own word stays
    expect(measuredByText({ measuredBy: 'TCP connect', paths: [{ ...gw, measured: false }] })).toBe('TCP connect');
  });

  it('judges a truncated answer fetched over TCP, a refused port 53 and a route error', () => {
    const p = {
      path: { kind: 'dns', from: 'pod', to: '10.0.0.1:53', proto: 'udp', verdict: 'timeout', measured: false, note: '' },
      fromAgent: 'x',
      host: '10.0.0.1',
      port: 53,
      expect: 'host',
      existing: false,
      dns: { server: '10.0.0.1', name: 'big.test', qtype: 'A' },
    } satisfies PlannedConnect;
    const tcp = judgeDns(p, { ...answer('NOERROR', ['A 1.1.1.1']), transport: 'tcp', truncated: true }, 1500, unreachableNote);
    expect(tcp).toMatchObject({ verdict: 'reachable', proto: 'tcp', dns: { transport: 'tcp', truncated: true } });
    expect(tcp.note).toContain('truncated; answered over TCP');
    expect(judgeDns(p, { kind: 'refused', udpRefused: true }, 1500, unreachableNote)).toMatchObject({
      verdict: 'refused',
      note: 'nothing listens on port 53: UDP port unreachable and TCP refused',
    });
    expect(judgeDns(p, { kind: 'unreachable', error: 'ENETUNREACH' }, 1500, unreachableNote).verdict).toBe('unreachable');
  });
});
