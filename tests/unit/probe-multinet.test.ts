/**
 * The probe on every attachment, and the `isolated` verdict. A pod on two bridge networks (eth0 with portmap, eth1
 * without) over the simulated network: gateways, peers and pod ports per network, host ports only where portmap is,
 * each path naming its network and interface; a break on eth1 still fails. The isolation rules are checked on the
 * plan and the judge directly, with a macvlan attachment whose kernel facts the test gives (the fake plugins have no
 * macvlan of their own); the same with real macvlan links is in tests/real/probe-multinet-real.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { failingPaths, pathsByNetwork, probeSucceeded, type ProbePath, type ProbeReport } from '../../shared/domain/probe';
import type { ProbedAttachment } from '../../electron/engine/probe/attachments';
import { forbiddenBy } from '../../electron/engine/probe/isolation';
import { judge } from '../../electron/engine/probe/judge';
import { planGateways, planPeers, planPortMappings, type PlanInput, type ProbePlan } from '../../electron/engine/probe/plan';
import { ProbeSession } from '../../electron/engine/probe/session';
import type { SandboxRecord } from '../../electron/engine/pods/record';
import { describeProbe } from '../../electron/cli/commands/probe';
import { FAKE_NETWORKS } from '../../testkit/fakes/fake-cni';
import { FakeProbeNet } from '../../testkit/fakes/fake-probe-net';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

const SECOND = {
  name: 'second-net',
  ifName: 'eth1',
  cniVersion: '1.0.0',
  plugins: [
    {
      type: 'bridge',
      bridge: 'cni1',
      isGateway: true,
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.89.0.0/16' }]], routes: [{ dst: '10.89.0.0/16' }] },
    },
  ],
};

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'multinet', uid: `uid-${name}` }, ...extra };
}

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const onIf = (r: ProbeReport, ifName: string) => r.paths.filter((p) => p.interface === ifName);

describe('probe on a pod with two networks (simulated)', () => {
  it('measures gateways, peers and pod ports on eth0 and eth1, host ports only where the chain has portmap, each path named', async () => {
    t = await createTestEngine({ networks: [...FAKE_NETWORKS, SECOND], options: { maxConfNum: 2, probeOnReady: false } });
    const { engine: e } = t;
    const mappings = [
      { container_port: 80, host_port: 8080 },
      { container_port: 81, host_port: 0 },
    ];
    const { id: a } = await e.run({ config: pod('a', { port_mappings: mappings }) });
    const { id: b } = await e.run({ config: pod('b') });
    const r = await e.probe(a);
    expect(r.errors).toEqual([]);
    for (const p of r.paths) expect(p, `${p.kind} ${p.to}`).toMatchObject({ network: expect.any(String), interface: expect.any(String) });
    expect(r.networks).toEqual([
      { network: 'containerd-net', interface: 'eth0', plugins: ['bridge', 'portmap', 'bandwidth'], peers: { ready: 1, measured: 1 } },
      { network: 'second-net', interface: 'eth1', plugins: ['bridge'], peers: { ready: 1, measured: 1 } },
    ]);
    const eth1 = onIf(r, 'eth1');
    expect(eth1.every((p) => p.network === 'second-net')).toBe(true);
    // the second network has no portmap: no host-port path crosses it
    expect(eth1.filter((p) => p.kind === 'hostPort')).toEqual([]);
    expect(onIf(r, 'eth0').filter((p) => p.kind === 'hostPort')).toHaveLength(3);
    expect(eth1.filter((p) => p.kind === 'gateway').map((p) => p.to)).toEqual([expect.stringMatching(/^10\.89\.0\.1:\d+$/)]);
    expect(eth1.filter((p) => p.kind === 'podPort').map((p) => p.to)).toEqual([expect.stringMatching(/^10\.89\.\d+\.\d+:81$/)]);
    const peers = eth1.filter((p) => p.kind === 'peer');
    expect(peers.map((p) => [p.from, p.answeredBy])).toEqual([
      ['pod', b],
      ['peer b', a],
    ]);
    for (const p of eth1) expect(p, `${p.kind} ${p.to}`).toMatchObject({ verdict: 'reachable', measured: true });
    expect(probeSucceeded(r)).toBe(true);
    // grouped for the app: one group per attachment, in attachment order
    expect(pathsByNetwork(r).map((g) => [g.network, g.interface, g.paths.length])).toEqual([
      ['containerd-net', 'eth0', onIf(r, 'eth0').length],
      ['second-net', 'eth1', eth1.length],
    ]);
    expect(t.probe.openAgents()).toBe(0);
    // podscope probe's text: a heading per network with its chain, that network's paths under it
    const text = describeProbe(r).split('\n');
    const second = text.indexOf('  network second-net (eth1) [bridge]');
    expect(text.indexOf('  network containerd-net (eth0) [bridge → portmap → bandwidth]')).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(0);
    expect(text.slice(second + 1).filter((l) => /^ {4}\S/.test(l))).toHaveLength(eth1.length);
  });

  it('a break on eth1 (its peer address black-holed) fails the probe and names eth1', async () => {
    t = await createTestEngine({ networks: [...FAKE_NETWORKS, SECOND], options: { maxConfNum: 2, probeOnReady: false } });
    const { engine: e, probe } = t;
    const { id: a } = await e.run({ config: pod('a') });
    const { id: b } = await e.run({ config: pod('b') });
    // b's own eth1 address: where a's peer agent connects to in b's probe
    const toB = (await e.probe(b)).paths.find((p) => p.kind === 'peer' && p.interface === 'eth1' && p.from === 'peer a');
    const addr = /^([\d.]+):/.exec(toB!.to)![1]!;
    expect(addr).toMatch(/^10\.89\./);
    probe.blackhole(addr);
    const r = await e.probe(a);
    expect(probeSucceeded(r)).toBe(false);
    expect(failingPaths(r).map((p) => [p.kind, p.from, p.interface, p.verdict])).toEqual([['peer', 'pod', 'eth1', 'timeout']]);
  });
});

// ---- the plan and the judge over a macvlan attachment ----

const POD = 'c'.repeat(64);
const PEER = 'd'.repeat(64);
const record = (id: string, name: string, eth1Ip: string): SandboxRecord =>
  ({
    id,
    netnsPath: `/run/netns/${name}`,
    config: { metadata: { name, namespace: 'multinet' }, port_mappings: [] },
    network: {
      networks: [{ network: 'macnet', ifName: 'eth1', cniVersion: '1.0.0', capabilityArgs: {}, cniArgs: [] }],
      interfaces: { eth1: { ipConfigs: [{ ip: eth1Ip, gateway: '10.71.0.1' }] } },
      routes: [],
      dns: [],
    },
  }) as unknown as SandboxRecord;

function macvlan(over: Partial<ProbedAttachment> = {}, mode = 'bridge'): ProbedAttachment {
  return {
    network: 'macnet',
    ifName: 'eth1',
    plugins: [{ type: 'macvlan', master: 'pmnpar', mode }],
    ips: ['10.71.0.10'],
    gateways: ['10.71.0.1'],
    link: { kind: 'macvlan', parent: { name: 'pmnpar', addresses: ['10.71.0.1', 'fe80::1'] } },
    ...over,
  };
}

async function planFor(att: ProbedAttachment, withPeer = false) {
  const net = new FakeProbeNet(() => ({ addresses: new Map([['10.71.0.1', 'host']]), nat: { v4: [], v6: [] } }));
  const session = new ProbeSession(net, 'feedface', undefined);
  const rec = record(POD, 'pod', '10.71.0.10');
  const peer = record(PEER, 'peer', '10.71.0.11');
  await Promise.all([session.open('host', undefined), session.open(POD, rec.netnsPath)]);
  const input: PlanInput = { rec, session, others: withPeer ? [peer] : [], attachments: [att], hostAddresses: new Set(['10.71.0.1']) };
  const plan: ProbePlan = { connects: [], decided: [], errors: [] };
  await planPortMappings(input, plan);
  await planGateways(input, plan);
  await planPeers(input, plan, new Map([['macnet', withPeer ? [peer] : []]]));
  await session.close();
  return plan;
}

describe('isolated: paths a macvlan/ipvlan attachment forbids by design', () => {
  it("the gateway on the macvlan's own parent is planned as forbidden, naming macvlan and the rule; no answer there is isolated", async () => {
    const plan = await planFor(macvlan());
    const gw = plan.connects.find((c) => c.path.kind === 'gateway')!;
    expect(gw.path).toMatchObject({ network: 'macnet', interface: 'eth1', to: expect.stringMatching(/^10\.71\.0\.1:/) });
    expect(gw.forbidden).toMatch(/^macvlan: a macvlan child cannot reach its parent link's own addresses \(10\.71\.0\.1 is on pmnpar\)/);
    const isolated = judge(gw, { kind: 'timeout' }, 'feedface', [], undefined);
    expect(isolated).toMatchObject({ verdict: 'isolated', measured: true, why: gw.forbidden });
    // a routing error on such a path is the same expected isolation, still measured
    expect(judge(gw, { kind: 'unreachable', error: 'EINVAL' }, 'feedface', [], undefined).verdict).toBe('isolated');
  });

  it('a packet that arrives on a forbidden path is reported as measured (reachable), with a note that the design forbids it', () => {
    const p = {
      path: {
        kind: 'gateway',
        from: 'pod',
        to: '10.71.0.1:4000',
        proto: 'tcp',
        verdict: 'timeout',
        measured: false,
        note: '',
      } as ProbePath,
      fromAgent: POD,
      host: '10.71.0.1',
      port: 4000,
      expect: 'host',
      existing: false,
      forbidden: "macvlan: a macvlan child cannot reach its parent link's own addresses",
    };
    const path = judge(p, { kind: 'connected', rttMs: 0.1, banner: 'PODSCOPE-PROBE feedface host' }, 'feedface', [], undefined);
    expect(path.verdict).toBe('reachable');
    expect(path.note).toMatch(/unexpected: the plugin's design forbids this path, yet the packet arrived/);
  });

  it('host → a macvlan pod is forbidden without a host leg, allowed with one; the parent address stays forbidden either way', () => {
    const bare = macvlan();
    expect(forbiddenBy(bare, { kind: 'fromHost' })).toMatch(/^macvlan: the host has no macvlan of its own on pmnpar/);
    const leg = macvlan({ link: { kind: 'macvlan', parent: { name: 'pmnpar', addresses: ['10.71.0.1'] }, hostLeg: 'pmnleg' } });
    expect(forbiddenBy(leg, { kind: 'fromHost' })).toBeUndefined();
    expect(forbiddenBy(leg, { kind: 'toHost', address: '10.71.0.2' })).toBeUndefined();
    expect(forbiddenBy(leg, { kind: 'toHost', address: '10.71.0.1' })).toMatch(/parent link's own addresses/);
  });

  it('macvlan peers: bridge mode talks, private never, vepa only through a reflecting switch; a bridge attachment forbids nothing', async () => {
    const bridgeMode = await planFor(macvlan(), true);
    expect(bridgeMode.connects.filter((c) => c.path.kind === 'peer').map((c) => c.forbidden)).toEqual([undefined, undefined]);
    const priv = await planFor(macvlan({}, 'private'), true);
    expect(priv.connects.filter((c) => c.path.kind === 'peer').map((c) => c.forbidden)).toEqual([
      expect.stringMatching(/^macvlan \(mode private\)/),
      expect.stringMatching(/^macvlan \(mode private\)/),
    ]);
    expect(forbiddenBy(macvlan({}, 'vepa'), { kind: 'peer' })).toMatch(/^macvlan \(mode vepa\).*802\.1Qbg/);
    const veth: ProbedAttachment = { ...macvlan(), plugins: [{ type: 'bridge' }], link: { kind: 'veth' } };
    for (const q of [{ kind: 'fromHost' }, { kind: 'peer' }, { kind: 'toHost', address: '10.71.0.1' }] as const)
      expect(forbiddenBy(veth, q)).toBeUndefined();
  });

  it('without kernel facts the chain decides (ipvlan named as such); the kernel, when read, overrides the chain', () => {
    const ipvlan: ProbedAttachment = { ...macvlan(), plugins: [{ type: 'ipvlan', master: 'pmnpar' }], link: undefined };
    expect(forbiddenBy(ipvlan, { kind: 'fromHost' })).toMatch(/^ipvlan: the host has no ipvlan of its own on pmnpar/);
    // the kernel says the interface is a veth: the chain's macvlan claim does not make anything isolated
    expect(forbiddenBy(macvlan({ link: { kind: 'veth' } }), { kind: 'fromHost' })).toBeUndefined();
  });

  it('isolated paths neither fail the probe nor count as failing; a broken path beside them still fails', () => {
    const base = { kind: 'gateway', from: 'pod', to: 'x', proto: 'tcp', measured: true, note: '' } as const;
    const report = (verdicts: ProbePath['verdict'][]): ProbeReport => ({
      sandboxId: POD,
      measuredAt: '',
      measuredBy: '',
      durationMs: 0,
      trigger: 'onDemand',
      errors: [],
      paths: verdicts.map((verdict) => ({ ...base, verdict })),
    });
    expect(probeSucceeded(report(['reachable', 'isolated']))).toBe(true);
    expect(failingPaths(report(['reachable', 'isolated']))).toEqual([]);
    expect(probeSucceeded(report(['isolated']))).toBe(true);
    expect(probeSucceeded(report(['isolated', 'timeout']))).toBe(false);
    expect(failingPaths(report(['isolated', 'timeout'])).map((p) => p.verdict)).toEqual(['timeout']);
  });
});
