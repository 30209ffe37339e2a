/**
 * The path MTU audit's two pure parts and its verdict. The bisection against simulated paths: the common case costs one
 * echo, "fragmentation needed" gives the MTU at once (shown, not failed), a silent drop is bisected to the exact size
 * (a black hole), a path where no echo crosses claims nothing. The narrow-link finder on kernel states recorded from
 * the real test (tests/real/probe-dns-mtu-real.test.ts, PODSCOPE_TEST_RECORD): a host veth lowered to 1400 is named
 * before the bridge that followed it; a router hop's device toward a far subnet; a route with an mtu. Across the nodes
 * of a kind-shaped cluster (tests/real/nodes-probe-across.test.ts): a node's eth0 lowered to 1400 is named on that
 * node, whichever way the path goes. And a black hole fails the probe (simulated network).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { failingPaths, probeSucceeded } from '../../shared/domain/probe';
import { parseLinks, parseRoutes } from '../../electron/engine/kernel/parse';
import { findPathMtu, narrowestLink, type NetnsLinks, type SendEcho } from '../../electron/engine/probe/mtu';
import { HOST_HOP, narrowestAcross, type AcrossMtuPath, type MtuHop } from '../../electron/engine/probe/mtu-across';
import type { PingOutcome } from '../../electron/engine/netns/probe-net';
import { describeProbe } from '../../electron/cli/commands/probe';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

/** a path that passes sizes up to `mtu`; larger ones vanish (blackHole) or are answered "fragmentation needed" */
function path(mtu: number, how: 'blackHole' | 'fragNeeded' | 'noEcho' = 'blackHole'): SendEcho & { sizes: number[] } {
  const sizes: number[] = [];
  const send = async (size: number): Promise<PingOutcome> => {
    sizes.push(size);
    if (how === 'noEcho') return { kind: 'lost' };
    if (size <= mtu) return { kind: 'ok' };
    return how === 'fragNeeded' ? { kind: 'tooBig', mtu } : { kind: 'lost' };
  };
  return Object.assign(send, { sizes });
}

describe('path MTU bisection', () => {
  it('a path that passes the interface MTU costs one echo', async () => {
    const send = path(1500);
    expect(await findPathMtu(send, { interfaceMtu: 1500, family: 4 })).toMatchObject({ pathMtu: 1500, blackHole: false, probes: 1 });
    expect(send.sizes).toEqual([1500]);
  });

  it('"fragmentation needed" gives the MTU at once, confirmed by one echo: smaller, shown, not a black hole', async () => {
    const send = path(1300, 'fragNeeded');
    expect(await findPathMtu(send, { interfaceMtu: 1500, family: 4 })).toMatchObject({
      pathMtu: 1300,
      blackHole: false,
      pmtud: true,
      probes: 2,
    });
  });

  it.each([577, 1000, 1280, 1400, 1404, 1499])(
    'a silent drop above %i bytes is bisected to exactly that size: a black hole',
    async (mtu) => {
      const send = path(mtu);
      const r = await findPathMtu(send, { interfaceMtu: 1500, family: 4 });
      expect(r).toMatchObject({ pathMtu: mtu, blackHole: true, interfaceMtu: 1500 });
      // the interface MTU twice, the floor, 7 sizes a round (1500 → 576 in at most 4 rounds), one confirmation
      expect(r.probes).toBeLessThanOrEqual(3 + 7 * 4 + 1);
      expect(r.note).toContain(mtu === 1499 ? 'packets of 1500 bytes' : `${mtu + 1}–1500 bytes`);
    },
  );

  it('no echo at any size claims nothing (ICMP echo does not cross); an IPv6 path starts at 1280', async () => {
    expect(await findPathMtu(path(0, 'noEcho'), { interfaceMtu: 1500, family: 4 })).toMatchObject({ blackHole: false, probes: 3 });
    const six = path(1400);
    expect(await findPathMtu(six, { interfaceMtu: 1500, family: 6 })).toMatchObject({ pathMtu: 1400, blackHole: true });
    expect(Math.min(...six.sizes)).toBe(1280);
  });

  it('one lost echo is not a black hole: the first full-size one, or one during the bisection, is sent again', async () => {
    const seen = new Set<number>();
    // the first echo of each size vanishes once (the first packet to a neighbour not yet resolved)
    const once = async (size: number): Promise<PingOutcome> => {
      if (size === 1500 && !seen.has(size)) {
        seen.add(size);
        return { kind: 'lost' };
      }
      return { kind: 'ok' };
    };
    expect(await findPathMtu(once, { interfaceMtu: 1500, family: 4 })).toMatchObject({ pathMtu: 1500, blackHole: false });
    // both echoes at 1500 lost: the bisection runs; its confirmation at 1500 crosses, so no black hole is claimed
    let lost1500 = 0;
    const twice = async (size: number): Promise<PingOutcome> => ({ kind: size === 1500 && lost1500++ < 2 ? 'lost' : 'ok' });
    expect(await findPathMtu(twice, { interfaceMtu: 1500, family: 4 })).toMatchObject({ pathMtu: 1500, blackHole: false });
  });

  it('ping missing is "not measured", never a black hole', async () => {
    const r = await findPathMtu(async () => ({ kind: 'error', error: 'ping (iputils-ping) is not installed' }), {
      interfaceMtu: 1500,
      family: 4,
    });
    expect(r).toMatchObject({ blackHole: false, note: 'not measured: ping (iputils-ping) is not installed' });
    expect(r.pathMtu).toBeUndefined();
  });
});

type Recorded = { pod: { links: unknown[]; routes: unknown[] }; host: { links: unknown[]; routes: unknown[] } };
function recorded(name: string): { pod: NetnsLinks; host: NetnsLinks } {
  const r = JSON.parse(readFileSync(join(__dirname, '../fixtures/mtu', `${name}.json`), 'utf8')) as Recorded;
  const ns = (label: string, s: Recorded['pod']): NetnsLinks => ({
    label,
    links: parseLinks(JSON.stringify(s.links)),
    routes: parseRoutes(JSON.stringify(s.routes), 4),
  });
  return { pod: ns('pod', r.pod), host: ns('host', r.host) };
}

describe('the narrowest link, on recorded kernel states', () => {
  it('a host veth lowered to 1400 is named (the bridge that took its MTU comes after it on the path), either way', () => {
    const { pod, host } = recorded('blackhole');
    expect(narrowestLink({ host, from: { ns: pod, ifName: 'eth0' }, dst: '10.130.0.1', interfaceMtu: 1500 })).toEqual({
      node: 'host',
      netns: 'host',
      interface: 'veth2c6afdf0',
      mtu: 1400,
    });
    // host → pod (a host port): the host's route to the pod goes over the bridge, which is at 1400 too: named first
    expect(narrowestLink({ host, to: { ns: pod, ifName: 'eth0' }, dst: '10.130.0.2', interfaceMtu: 1500 })?.interface).toBe('pz0-dns');
  });

  it("a router hop: the host's device toward the far subnet; nothing narrower than the interface on the way to the gateway", () => {
    const { pod, host } = recorded('router');
    expect(narrowestLink({ host, from: { ns: pod, ifName: 'eth0' }, dst: '10.130.7.2', interfaceMtu: 1500 })).toEqual({
      node: 'host',
      netns: 'host',
      interface: 'pz0fh',
      mtu: 1300,
    });
    expect(narrowestLink({ host, from: { ns: pod, ifName: 'eth0' }, dst: '10.130.0.1', interfaceMtu: 1500 })).toBeUndefined();
  });

  it('a route with an mtu attribute in the pod is named as a route', () => {
    const { pod, host } = recorded('router');
    pod.routes.push({ family: 4, table: 'main', dst: '10.130.7.0/25', gateway: '10.130.0.1', dev: 'eth0', mtu: 1280 });
    expect(narrowestLink({ host, from: { ns: pod, ifName: 'eth0' }, dst: '10.130.7.2', interfaceMtu: 1500 })).toEqual({
      node: 'host',
      netns: 'pod',
      interface: 'route to 10.130.7.0/25 dev eth0',
      mtu: 1280,
    });
  });
});

type RecordedNs = { links: unknown[]; routes: unknown[] };
type RecordedAcross = Record<'host' | 'podA' | 'podB', RecordedNs> & Record<'nodeA' | 'nodeB', RecordedNs & { name: string }>;

/** two nodes of the recorded cluster (node B's eth0 at 1400), a pod on each, and the host's bridge joining them */
function recordedAcross() {
  const r = JSON.parse(readFileSync(join(__dirname, '../fixtures/mtu/across.json'), 'utf8')) as RecordedAcross;
  const hop = (key: string, label: string, node: string): MtuHop => ({ key, netnsPath: `/run/netns/${key}`, label, node });
  const hops = {
    nodeA: hop('node:a', `node ${r.nodeA.name}`, r.nodeA.name),
    nodeB: hop('node:b', `node ${r.nodeB.name}`, r.nodeB.name),
    podA: hop('pod-a', 'pod a', r.nodeA.name),
    podB: hop('pod-b', 'pod b', r.nodeB.name),
  };
  const states = new Map<string, NetnsLinks>();
  const add = (h: MtuHop, s: RecordedNs) =>
    states.set(h.key, { label: h.label, links: parseLinks(JSON.stringify(s.links)), routes: parseRoutes(JSON.stringify(s.routes), 4) });
  add(HOST_HOP, r.host);
  for (const k of ['nodeA', 'nodeB', 'podA', 'podB'] as const) add(hops[k], r[k]);
  const ip = (k: 'podA' | 'podB') =>
    states
      .get(hops[k].key)!
      .links.find((l) => l.name === 'eth0')!
      .addresses.find((a) => a.family === 4)!.address;
  return { r, hops, states, ipA: ip('podA'), ipB: ip('podB') };
}

describe('the narrowest link across nodes, on a recorded kind-shaped cluster', () => {
  const { r, hops, states, ipA, ipB } = recordedAcross();
  const B = r.nodeB.name;
  const named = { node: B, netns: `node ${B}`, interface: 'eth0', mtu: 1400 };

  it('pod → pod into the node whose eth0 is at 1400: that eth0, on that node, though every link before it is 1500', () => {
    const p: AcrossMtuPath = { from: { ns: hops.podA, node: hops.nodeA }, to: { ns: hops.podB, node: hops.nodeB }, dst: ipB, src: ipA };
    expect(narrowestAcross(p, states, 1500)).toEqual(named);
  });

  it('the other way, and from that node itself: the same eth0 (its own device toward the destination)', () => {
    const back: AcrossMtuPath = { from: { ns: hops.podB, node: hops.nodeB }, to: { ns: hops.podA, node: hops.nodeA }, dst: ipA, src: ipB };
    expect(narrowestAcross(back, states, 1500)).toEqual(named);
    const fromNode: AcrossMtuPath = { from: { ns: hops.nodeB }, to: { ns: hops.podA, node: hops.nodeA }, dst: ipA, src: '10.130.250.12' };
    expect(narrowestAcross(fromNode, states, 1500)).toEqual(named);
  });

  it('nothing narrower than the sender allows: nothing named; a route with an mtu on the sending node is named as a route', () => {
    const p: AcrossMtuPath = { from: { ns: hops.podA, node: hops.nodeA }, to: { ns: hops.podB, node: hops.nodeB }, dst: ipB, src: ipA };
    expect(narrowestAcross(p, states, 1400)).toBeUndefined();
    const nodeA = states.get(hops.nodeA.key)!;
    const route = nodeA.routes.find(
      (x) => x.table === 'main' && x.dev === 'eth0' && x.dst.startsWith(ipB.split('.').slice(0, 3).join('.')),
    )!;
    route.mtu = 1300;
    try {
      expect(narrowestAcross(p, states, 1500)).toEqual({
        node: r.nodeA.name,
        netns: `node ${r.nodeA.name}`,
        interface: `route to ${route.dst} dev eth0`,
        mtu: 1300,
      });
    } finally {
      delete route.mtu;
    }
  });
});

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('the MTU audit in a probe (simulated network)', () => {
  it('a black hole on the gateway path fails the probe with its reason and the narrow link, though the connect succeeded', async () => {
    t = await createTestEngine({ options: { probeOnReady: false } });
    const { id } = await t.engine.run({ config: { metadata: { name: 'm', namespace: 'mtu', uid: 'uid-m' } } });
    const netns = (await t.engine.status(id)).netnsPath!;
    const gw = (await t.engine.probe(id)).paths.find((p) => p.kind === 'gateway')!.to.replace(/:\d+$/, '');
    t.probe.withLinks(
      new Map([
        [
          netns,
          { links: [{ ifindex: 2, name: 'eth0', mtu: 1500, kind: 'veth', peerIfindex: 7, peerNetnsId: 0, addresses: [] }], routes: [] },
        ],
        [
          'host',
          {
            links: [
              { ifindex: 7, name: 'vethabc', mtu: 1400, kind: 'veth', master: 'cni0', addresses: [] },
              { ifindex: 5, name: 'cni0', mtu: 1400, kind: 'bridge', addresses: [] },
            ],
            routes: [],
          },
        ],
      ]),
    );
    t.probe.pathMtus.set(gw, { mtu: 1400, blackHole: true });
    const r = await t.engine.probe(id);
    const p = r.paths.find((x) => x.kind === 'gateway')!;
    expect(p.verdict).toBe('reachable');
    expect(p.mtu).toMatchObject({ pathMtu: 1400, blackHole: true, at: { interface: 'vethabc', mtu: 1400 } });
    expect(r.mtuAudited).toBe(true);
    expect(probeSucceeded(r)).toBe(false);
    expect(failingPaths(r)).toEqual([p]);
    expect(describeProbe(r)).toContain('!! MTU black hole');
    // the echoes came from the pod's own netns
    expect(new Set(t.probe.pings.map((x) => x.from))).toEqual(new Set([netns]));
    // asked not to audit: no echo, no mtu
    const before = t.probe.pings.length;
    const plain = await t.engine.probe(id, { mtu: false });
    expect(plain.paths.every((x) => x.mtu === undefined)).toBe(true);
    expect(t.probe.pings.length).toBe(before);
  });
});
