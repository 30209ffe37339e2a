/**
 * The probe's verdict logic on the real SandboxEngine over the touch-point fakes: a simulated network where host-port
 * connects follow portmap's DNAT rules in chain order, so "shadowed", "refused" and "timeout" can each be produced on
 * demand. The same behaviour with real packets is in tests/real/probe-real.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { declaredPorts } from '../../electron/engine/probe/plan';
import { describeProbe } from '../../electron/cli/commands/probe';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import {
  conflictsForNewMappings,
  dnatChainOrder,
  failingPaths,
  hostPortConflictsFor,
  probeSucceeded,
  PROBE_PEERS_MAX,
  type ProbeReport,
} from '../../shared/domain/probe';

const ID_A = 'a'.repeat(64);
const ID_B = 'b'.repeat(64);

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'probe', uid: `uid-${name}` }, ...extra };
}

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function engine(probeOnReady = false): Promise<TestEngine> {
  t = await createTestEngine({ options: { probeOnReady } });
  return t;
}

describe('probe verdicts (simulated network)', () => {
  it('a host port with no listener is reachable through the probe responder, answered by the pod itself', async () => {
    const { engine: e, probe } = await engine();
    const { id } = await e.run({ config: pod('web', { port_mappings: [{ container_port: 80, host_port: 8080 }] }) });
    const r = await e.probe(id);
    const hp = r.paths.filter((p) => p.kind === 'hostPort');
    expect(hp.map((p) => p.to).sort()).toEqual(['10.88.0.1:8080', '127.0.0.1:8080', '[2001:4860:4860::1]:8080']);
    for (const p of hp) expect(p).toMatchObject({ verdict: 'reachable', answeredBy: id, listener: 'responder', measured: true });
    expect(r.paths.filter((p) => p.kind === 'gateway').map((p) => p.verdict)).toEqual(['reachable', 'reachable']);
    expect(probeSucceeded(r)).toBe(true);
    expect(probe.openAgents()).toBe(0);
    expect([...probe.responders.values()].every((m) => m.size === 0)).toBe(true);
  });

  it('the second pod on a taken host port is shadowed by the first (first DNAT jump wins), and both preview and status say so', async () => {
    const { engine: e, probe } = await engine();
    const { id: first } = await e.run({ config: pod('first', { port_mappings: [{ container_port: 80, host_port: 8080 }] }) });
    const second = pod('second', { port_mappings: [{ container_port: 81, host_port: 8080 }] });
    const preview = await e.preview({ config: second });
    expect(preview.hostPortConflicts).toEqual([
      { hostPort: 8080, protocol: 'tcp', hostIP: '', holders: [{ id: first, name: expect.stringContaining('first') }] },
    ]);
    const { id } = await e.run({ config: second });
    const r = await e.probe(id);
    for (const p of r.paths.filter((x) => x.kind === 'hostPort'))
      expect(p).toMatchObject({ verdict: 'shadowed', answeredBy: first, measured: true });
    expect(probeSucceeded(r)).toBe(false);
    expect(failingPaths(r).every((p) => p.verdict === 'shadowed')).toBe(true);
    const st = await e.status(id);
    expect(st.hostPortConflicts).toEqual([
      expect.objectContaining({ hostPort: 8080, winner: first, shadowed: [id], winnerFrom: 'dnat-chain' }),
    ]);
    expect(probe.openAgents()).toBe(0);
  });

  it("an existing (silent) listener counts as this pod's only when no other pod's DNAT jump comes first", async () => {
    const { engine: e, probe } = await engine();
    const { id: first } = await e.run({ config: pod('first', { port_mappings: [{ container_port: 80, host_port: 8080 }] }) });
    const { id: second } = await e.run({ config: pod('second', { port_mappings: [{ container_port: 80, host_port: 8080 }] }) });
    probe.listen((await e.status(first)).netnsPath!, 80);
    probe.listen((await e.status(second)).netnsPath!, 80);
    const r1 = await e.probe(first);
    for (const p of r1.paths.filter((x) => x.kind === 'hostPort'))
      expect(p).toMatchObject({ verdict: 'reachable', listener: 'existing', answeredBy: first });
    const r2 = await e.probe(second);
    for (const p of r2.paths.filter((x) => x.kind === 'hostPort')) expect(p).toMatchObject({ verdict: 'shadowed', answeredBy: first });
  });

  it('a NOTREADY pod (pause exited) is never measured and never reachable', async () => {
    const { engine: e, runtime, probe } = await engine();
    const { id } = await e.run({
      config: pod('dead', {
        port_mappings: [
          { container_port: 80, host_port: 8080 },
          { container_port: 81, host_port: 0 },
        ],
      }),
    });
    runtime.exit(id);
    const r = await e.probe(id);
    expect(r.paths.length).toBeGreaterThan(0);
    for (const p of r.paths) expect(p).toMatchObject({ verdict: 'notApplicable', measured: false });
    expect(probe.opened).toEqual([]);
    expect(probeSucceeded(r)).toBe(false);
  });

  it('a black-holed address times out and a port nobody answers on is refused', async () => {
    const { engine: e, probe } = await engine();
    const { id } = await e.run({ config: pod('web', { port_mappings: [{ container_port: 80, host_port: 0 }] }) });
    const st = await e.status(id);
    probe.blackhole(st.ip);
    const r = await e.probe(id);
    const v4 = r.paths.find((p) => p.kind === 'podPort' && p.family === 4)!;
    expect(v4).toMatchObject({ verdict: 'timeout', measured: true });
    expect(r.paths.find((p) => p.kind === 'podPort' && p.family === 6)).toMatchObject({ verdict: 'reachable' });
    // drop the host side of the gateway listener: the connect is refused
    probe.blackholed.clear();
    const origRespond = probe.open.bind(probe);
    probe.open = async (ns) => {
      const a = await origRespond(ns);
      if (ns === undefined) a.respond = async () => 1;
      return a;
    };
    const r2 = await e.probe(id);
    expect(r2.paths.filter((p) => p.kind === 'gateway').map((p) => p.verdict)).toEqual(['refused', 'refused']);
  });

  it('peers on the same network are measured both ways in both families', async () => {
    const { engine: e } = await engine();
    const { id: a } = await e.run({ config: pod('a') });
    const { id: b } = await e.run({ config: pod('b') });
    const r = await e.probe(a);
    const peers = r.paths.filter((p) => p.kind === 'peer');
    expect(peers).toHaveLength(4);
    expect(peers.filter((p) => p.from === 'pod').map((p) => p.answeredBy)).toEqual([b, b]);
    expect(peers.filter((p) => p.from !== 'pod').map((p) => p.answeredBy)).toEqual([a, a]);
    expect(new Set(peers.map((p) => p.family))).toEqual(new Set([4, 6]));
  });

  it('peers connect to every port the other declares, each way, and a DROP on one such port fails that path only', async () => {
    const { engine: e, probe } = await engine();
    const { id: a } = await e.run({ config: pod('a', { port_mappings: [{ container_port: 8080, host_port: 0 }] }) });
    const { id: b } = await e.run({
      config: pod('b', {
        port_mappings: [
          { container_port: 80, host_port: 0 },
          { container_port: 80, host_port: 0, protocol: 1 },
        ],
      }),
    });
    const stA = await e.status(a);
    const stB = await e.status(b);
    // b's own server on 80: connected to as it is, never taken over
    probe.listen(stB.netnsPath!, 80);
    probe.blockPort(stB.ip, 80);
    const r = await e.probe(a);
    const ports = r.paths.filter((p) => p.kind === 'peerPort');
    const toB = ports.filter((p) => p.from === 'pod' && p.proto === 'tcp');
    expect(toB.map((p) => [p.to, p.verdict, p.listener, p.declaredBy])).toEqual(
      expect.arrayContaining([
        [`${stB.ip}:80`, 'timeout', 'existing', 'port mapping 0'],
        [expect.stringMatching(/^\[.*\]:80$/), 'reachable', 'existing', 'port mapping 0'],
      ]),
    );
    expect(toB).toHaveLength(2);
    // the UDP mapping is declared too, but only TCP is measured
    expect(ports.filter((p) => p.from === 'pod' && p.proto === 'udp').map((p) => p.verdict)).toEqual(['notApplicable', 'notApplicable']);
    // the way back: b to a's declared port, where nothing listens, so the probe's responder answers
    const toA = ports.filter((p) => p.from === 'peer b');
    expect(toA.map((p) => [p.to.endsWith(':8080'), p.verdict, p.listener, p.answeredBy])).toEqual([
      [true, 'reachable', 'responder', a],
      [true, 'reachable', 'responder', a],
    ]);
    expect(toA.map((p) => p.to)).toContain(`${stA.ip}:8080`);
    // the network path between the same pods is reachable: the DROP is on port 80 only
    expect(r.paths.filter((p) => p.kind === 'peer').map((p) => p.verdict)).toEqual(['reachable', 'reachable', 'reachable', 'reachable']);
    expect(failingPaths(r)).toEqual([expect.objectContaining({ kind: 'peerPort', to: `${stB.ip}:80` })]);
    // the CLI's text tells the two kinds apart and says where the port is declared
    const text = describeProbe(r);
    expect(text).toContain(`timeout       peerPort pod → ${stB.ip}:80/tcp`);
    expect(text).toMatch(/reachable {5}peer-net pod → 10\.[\d.]+:\d+\/tcp/);
    expect(text).toContain('      declared by port mapping 0\n');
    // b's listener stays b's: no responder was opened on 80 there
    expect(probe.connects.some((c) => c.port === 80)).toBe(true);
    expect(probe.openAgents()).toBe(0);
  });

  it("a container's image EXPOSE is a declared port too: the peer connects to it, the path saying which container declares it", async () => {
    const { engine: e } = await engine();
    await t!.loadImage('podscope.test/exposing:1', {
      config: { Cmd: ['sh'], Env: ['PATH=/bin'], ExposedPorts: { '9000/tcp': {}, '5353/udp': {} } },
    });
    const { id: a } = await e.run({ config: pod('a') });
    const { id: b } = await e.run({ config: pod('b') });
    await e.createContainer({ podSandboxId: b, config: { metadata: { name: 'api' }, image: { image: 'podscope.test/exposing:1' } } });
    const ipB = (await e.status(b)).ip;
    const r = await e.probe(a);
    const toB = r.paths.filter((p) => p.kind === 'peerPort' && p.from === 'pod' && p.family === 4);
    expect(toB.map((p) => [p.to, p.proto, p.verdict, p.declaredBy])).toEqual([
      [`${ipB}:5353`, 'udp', 'notApplicable', 'container api (EXPOSE 5353/udp)'],
      [`${ipB}:9000`, 'tcp', 'reachable', 'container api (EXPOSE 9000/tcp)'],
    ]);
    expect(toB[1]).toMatchObject({ listener: 'responder', answeredBy: b });
    // a declares nothing: no path from b to a but the network one
    expect(r.paths.filter((p) => p.kind === 'peerPort' && p.from !== 'pod')).toEqual([]);
  });

  it('the ports a pod declares: port mappings and containers EXPOSE, each port once with every place naming it', () => {
    const facts = {
      config: {
        port_mappings: [
          { container_port: 80, host_port: 8080, protocol: 0 },
          { container_port: 53, host_port: 0, protocol: 1 },
        ],
      },
    };
    const got = declaredPorts(facts as unknown as Parameters<typeof declaredPorts>[0], [
      { port: 80, proto: 'tcp', container: 'web' },
      { port: 9000, proto: 'tcp', container: 'metrics' },
      { port: 0, proto: 'tcp', container: 'bad' },
    ]);
    expect(got).toEqual([
      { port: 53, proto: 'udp', declaredBy: 'port mapping 1' },
      { port: 80, proto: 'tcp', declaredBy: 'port mapping 0, container web (EXPOSE 80/tcp)' },
      { port: 9000, proto: 'tcp', declaredBy: 'container metrics (EXPOSE 9000/tcp)' },
    ]);
  });

  it('on a crowded network only the newest PROBE_PEERS_MAX peers get an agent, and the report says how many of how many', async () => {
    const { engine: e, probe } = await engine();
    const { id: a } = await e.run({ config: pod('a') });
    const others: string[] = [];
    for (let i = 0; i < PROBE_PEERS_MAX + 3; i++) others.push((await e.run({ config: pod(`peer-${i}`) })).id);
    const opened = probe.opened.length;
    const r = await e.probe(a);
    // one agent on the host, one in the pod, one per measured peer: not one per pod on the network
    expect(probe.opened.length - opened).toBe(2 + PROBE_PEERS_MAX);
    expect(r.peers).toEqual({ ready: PROBE_PEERS_MAX + 3, measured: PROBE_PEERS_MAX });
    const answered = new Set(r.paths.filter((p) => p.kind === 'peer' && p.from === 'pod').map((p) => p.answeredBy));
    expect(answered).toEqual(new Set(others.slice(-PROBE_PEERS_MAX)));
    expect(probe.openAgents()).toBe(0);
  });

  it('probe-on-ready leaves a report for lastProbe; a stopped pod gets notApplicable', async () => {
    const { engine: e } = await engine(true);
    const { id } = await e.run({ config: pod('web') });
    let last: ProbeReport | null = null;
    for (let i = 0; i < 50 && !last; i++) {
      await new Promise((r) => setTimeout(r, 10));
      last = await e.lastProbe(id);
    }
    expect(last?.trigger).toBe('onReady');
    await e.stop(id);
    const r = await e.probe(id);
    expect(r.paths.every((p) => p.verdict === 'notApplicable')).toBe(true);
  });
});

describe('host-port conflicts (pure)', () => {
  const holder = (id: string, createdAtNs: string, hostIP?: string) => ({
    id,
    name: id.slice(0, 1),
    createdAtNs,
    ready: true,
    hostPorts: [{ hostPort: 80, containerPort: 80, protocol: 'tcp', hostIP }],
  });

  it('the winner comes from the DNAT chain order when there is one, else from creation order (portmap appends)', () => {
    const holders = [holder(ID_A, '2'), holder(ID_B, '1')];
    expect(hostPortConflictsFor(ID_A, holders)[0]).toMatchObject({ winner: ID_B, shadowed: [ID_A], winnerFrom: 'creation-order' });
    const lines = [
      `-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"n\\" id: \\"${ID_A}\\"" -m multiport --dports 80,443 -j CNI-DN-1`,
      `-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"n\\" id: \\"${ID_B}\\"" -m multiport --dports 80 -j CNI-DN-2`,
    ];
    expect(dnatChainOrder(lines)(80, 'tcp')).toEqual([ID_A, ID_B]);
    expect(dnatChainOrder(lines)(80, 'udp')).toEqual([]);
    expect(hostPortConflictsFor(ID_B, holders, dnatChainOrder(lines))[0]).toMatchObject({
      winner: ID_A,
      shadowed: [ID_B],
      winnerFrom: 'dnat-chain',
    });
  });

  it('different host_ips do not collide; a wildcard collides with any; a NOTREADY holder does not count', () => {
    expect(hostPortConflictsFor(ID_A, [holder(ID_A, '1', '10.0.0.1'), holder(ID_B, '2', '10.0.0.2')])).toEqual([]);
    expect(hostPortConflictsFor(ID_A, [holder(ID_A, '1', '10.0.0.1'), holder(ID_B, '2')])).toHaveLength(1);
    expect(conflictsForNewMappings([{ hostPort: 80, protocol: 'tcp' }], [{ ...holder(ID_B, '1'), ready: false }])).toEqual([]);
    expect(conflictsForNewMappings([{ hostPort: 80, protocol: 'udp' }], [holder(ID_B, '1')])).toEqual([]);
  });
});

describe('sandbox.probe over the IPC router', () => {
  it('validates the id, runs the probe on the engine and serves the last report', async () => {
    const { createRouter } = await import('../../electron/ipc/router');
    const { createEndpointRegistry } = await import('../../electron/endpoints');
    const { trustOrigins } = await import('../../electron/ipc/sender');
    const { engine: e } = await engine();
    const router = createRouter({
      engine: e,
      endpoints: createEndpointRegistry({ local: e }),
      isTrustedSender: trustOrigins(['app://podscope']),
    });
    const sender = { transport: 'electron' as const, url: 'app://podscope/index.html' };
    const { id } = await e.run({ config: pod('web', { port_mappings: [{ container_port: 80, host_port: 8080 }] }) });
    expect(await router.handle('sandbox.lastProbe', { id }, sender)).toEqual({ ok: true, result: null });
    const bad = await router.handle('sandbox.probe', { id: '../etc' }, sender);
    expect(bad).toMatchObject({ ok: false, error: { code: 'InvalidArgument' } });
    const reply = (await router.handle('sandbox.probe', { id }, sender)) as { ok: true; result: ProbeReport };
    expect(reply.ok).toBe(true);
    expect(reply.result.paths.filter((p) => p.kind === 'hostPort').every((p) => p.verdict === 'reachable')).toBe(true);
    expect(await router.handle('sandbox.lastProbe', { id }, sender)).toEqual({ ok: true, result: reply.result });
    router.dispose();
  });
});
