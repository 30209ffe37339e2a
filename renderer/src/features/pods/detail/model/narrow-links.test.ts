/**
 * The probe's narrow links placed on the topology: a path's `mtu.at` lands on the drawing's box of that link (a host
 * veth by name in the host's netns, the pod's own interface in its netns), each link once with every path through it;
 * a black hole outranks a smaller MTU PMTU discovery reports; a link the drawing has no box for is kept, not dropped.
 */
import { describe, expect, it } from 'vitest';
import type { PathMtu, ProbePath, ProbeReport } from '../../../../../../shared/domain/probe';
import type { TopologyNode } from '../../../../../../shared/domain/topology';
import { narrowLinkMarks, narrowLinkPlace } from './narrow-links';

const SB = 'a'.repeat(64);
const nodes: TopologyNode[] = [
  { id: `pod:${SB}:eth0`, kind: 'pod-if', name: 'eth0', netns: '/run/netns/cni-1', sandboxId: SB, mtu: 1500, addresses: [] },
  { id: 'host:veth9f', kind: 'host-veth', name: 'veth9f', netns: 'host', sandboxId: SB, mtu: 1400, addresses: [] },
  { id: 'host:cni0', kind: 'bridge', name: 'cni0', netns: 'host', mtu: 1400, addresses: [] },
  { id: 'host', kind: 'host', name: 'host', netns: 'host', addresses: [] },
];

const blackHoleAtVeth: PathMtu = {
  pathMtu: 1404,
  interfaceMtu: 1500,
  blackHole: true,
  at: { node: 'host', netns: 'host', interface: 'veth9f', mtu: 1400 },
  probes: 9,
  note: 'sizes over 1404 vanish without ICMP',
};
const path = (over: Partial<ProbePath>): ProbePath => ({
  kind: 'gateway',
  from: 'pod',
  to: '10.88.0.1:9',
  proto: 'tcp',
  verdict: 'reachable',
  measured: true,
  note: '',
  ...over,
});
const report = (paths: ProbePath[]): ProbeReport => ({
  sandboxId: SB,
  measuredAt: '2026-11-27T22:00:00Z',
  measuredBy: 'TCP connect',
  durationMs: 10,
  trigger: 'onDemand',
  paths,
  errors: [],
});

describe('narrow links on the topology', () => {
  it("puts a black hole on the host veth's box, once for every path through it, with its MTU and why", () => {
    const marks = narrowLinkMarks(
      report([
        path({ mtu: blackHoleAtVeth }),
        path({ kind: 'hostPort', from: 'host', to: '127.0.0.1:8080', mtu: { ...blackHoleAtVeth, pathMtu: 1400 } }),
        path({ kind: 'peer', to: '10.88.0.7:9' }),
      ]),
      nodes,
      SB,
    );
    expect(marks).toHaveLength(1);
    expect(marks[0]).toMatchObject({ nodeId: 'host:veth9f', blackHole: true, pathMtu: 1400, interfaceMtu: 1500 });
    expect(marks[0]!.paths).toEqual(['gateway pod → 10.88.0.1:9', 'host port host → 127.0.0.1:8080']);
    expect(marks[0]!.why).toContain('packets over 1400 vanish here without an ICMP "fragmentation needed"');
    expect(narrowLinkPlace(marks[0]!.link)).toBe('host veth9f');
  });

  it("a smaller MTU PMTU discovery reports is marked as shown, not failed; the pod's own interface is found in its netns", () => {
    const pmtud: PathMtu = {
      pathMtu: 1400,
      interfaceMtu: 1500,
      blackHole: false,
      pmtud: true,
      at: { node: 'host', netns: 'pod', interface: 'eth0', mtu: 1500 },
      probes: 2,
      note: 'fragmentation needed',
    };
    const [m] = narrowLinkMarks(report([path({ mtu: pmtud })]), nodes, SB);
    expect(m).toMatchObject({ nodeId: `pod:${SB}:eth0`, blackHole: false });
    expect(m!.why).toContain('shown, not a failure');
  });

  it("keeps a link the drawing has no box for (a route with an mtu, another node's link), black holes first", () => {
    const route: PathMtu = {
      pathMtu: 1300,
      interfaceMtu: 1500,
      blackHole: false,
      pmtud: true,
      at: { node: 'host', netns: 'host', interface: 'route to 10.99.0.0/16', mtu: 1300 },
      probes: 2,
      note: '',
    };
    const remote: PathMtu = { ...blackHoleAtVeth, at: { node: 'kind-worker', netns: 'host', interface: 'eth0', mtu: 1400 } };
    const marks = narrowLinkMarks(report([path({ mtu: route }), path({ to: '10.99.0.3:9', mtu: remote })]), nodes, SB);
    expect(marks.map((m) => [narrowLinkPlace(m.link), m.nodeId, m.blackHole])).toEqual([
      ['host eth0 on kind-worker', undefined, true],
      ['route to 10.99.0.0/16 (host)', undefined, false],
    ]);
  });

  it("marks nothing from paths not measured, from an audit that found no narrower link, or from another pod's report", () => {
    const wide: PathMtu = { pathMtu: 1500, interfaceMtu: 1500, blackHole: false, probes: 1, note: '' };
    expect(narrowLinkMarks(report([path({ mtu: wide }), path({ measured: false, mtu: blackHoleAtVeth })]), nodes, SB)).toEqual([]);
    expect(narrowLinkMarks({ ...report([path({ mtu: blackHoleAtVeth })]), sandboxId: 'b'.repeat(64) }, nodes, SB)).toEqual([]);
    expect(narrowLinkMarks(null, nodes, SB)).toEqual([]);
  });
});
