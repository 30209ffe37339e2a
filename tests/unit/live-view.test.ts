import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PodSandboxConfigSchema } from '../../shared/domain/config';
import { kernelCommands } from '../../electron/engine/kernel/commands';
import { LinuxKernelReader } from '../../electron/engine/kernel/linux-reader';
import { KernelLiveReader, type RawLiveNetwork } from '../../electron/engine/netns/live-reader';
import type { ExecRequest, ExecResult } from '../../electron/engine/os/exec';
import { buildLiveView } from '../../electron/engine/pods/live';
import type { SandboxRecord } from '../../electron/engine/pods/record';

const ID = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);

function record(config: object): SandboxRecord {
  return {
    version: 1,
    id: ID,
    name: 'n',
    config: PodSandboxConfigSchema.parse({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, ...config }),
    runtimeHandler: '',
    ipPreference: 'ipv4',
    createdAt: '',
    createdAtNs: '1',
    state: 'Ready',
    netnsPath: '/var/run/netns/cni-x',
    ip: '10.1.0.2',
    additionalIps: ['fd00:1::2'],
    ipSelection: { preference: 'ipv4', primary: '10.1.0.2', additional: ['fd00:1::2'], reason: '', eth0Ips: ['10.1.0.2', 'fd00:1::2'] },
    pause: { containerId: ID, status: 'running' },
    rootDir: '',
    runDir: '',
    trace: [],
  };
}

// shapes as `tc -j qdisc` and `iptables -t nat -S` print them (tc rates are bytes per second)
function raw(over: Partial<RawLiveNetwork> = {}): RawLiveNetwork {
  return {
    interfaces: [],
    routes: [],
    errors: [],
    hostLinkKinds: { vethaaaa: 'veth', bwpbbbb: 'ifb', cni0: 'bridge' },
    qdiscs: {
      vethaaaa: [{ kind: 'tbf', rate: 1_250_000, burst: 193273526 }],
      bwpbbbb: [{ kind: 'tbf', rate: 64_000 }],
      cni0: [{ kind: 'noqueue' }],
    },
    nat: {
      v4: [
        `-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"net\\" id: \\"${ID}\\"" -m multiport --dports 18080 -j CNI-DN-mine`,
        `-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"net\\" id: \\"${OTHER}\\"" -m multiport --dports 19090 -j CNI-DN-theirs`,
        '-A CNI-DN-mine -p tcp -m tcp --dport 18080 -j DNAT --to-destination 10.1.0.2:80',
        '-A CNI-DN-theirs -p tcp -m tcp --dport 19090 -j DNAT --to-destination 10.1.0.2:90',
      ],
      v6: [
        `-A CNI-HOSTPORT-DNAT -p udp -m comment --comment "dnat name: \\"net\\" id: \\"${ID}\\"" -m multiport --dports 5353 -j CNI-DN-mine`,
        '-A CNI-DN-mine -p udp -m udp --dport 5353 -j DNAT --to-destination [fd00:1::2]:53',
      ],
    },
    ...over,
  };
}

describe('buildLiveView', () => {
  const bw = { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '512k' };

  it('finds the annotated rates as tbf qdiscs: ingress on the host veth, egress on the ifb', () => {
    const v = buildLiveView(record({ annotations: bw }), raw(), new Date(0));
    expect(v.qdiscs.map((q) => [q.dev, q.role, q.rateBitsPerSecond])).toEqual([
      ['vethaaaa', 'host-veth', 10_000_000],
      ['bwpbbbb', 'ifb', 512_000],
    ]);
    expect(v.bandwidth.map((b) => [b.direction, b.matches, b.note])).toEqual([
      ['ingress', true, 'tbf at 10 Mbit/s on vethaaaa, as annotated'],
      ['egress', true, 'tbf at 512 kbit/s on bwpbbbb, as annotated'],
    ]);
  });

  it.each([
    [
      { 'kubernetes.io/ingress-bandwidth': '20M' },
      'ingress',
      false,
      /tbf at 10 Mbit\/s on vethaaaa, but the annotation asks for 20 Mbit\/s/,
    ],
    [{}, 'ingress', false, /although no annotation asks for it/],
  ])('%o: %s matches=%s', (annotations, direction, matches, note) => {
    const c = buildLiveView(record({ annotations }), raw(), new Date(0)).bandwidth.find((b) => b.direction === direction)!;
    expect(c.matches).toBe(matches);
    expect(c.note).toMatch(note);
  });

  it('says when an annotation did not become a qdisc, and when nothing is asked nor shaped', () => {
    const v = buildLiveView(record({ annotations: { 'kubernetes.io/egress-bandwidth': '1M' } }), raw({ qdiscs: {} }), new Date(0));
    expect(v.bandwidth[0]).toMatchObject({ direction: 'ingress', matches: true, note: 'not shaped, and no annotation asks for it' });
    expect(v.bandwidth[1]).toMatchObject({ direction: 'egress', matches: false, requestedBitsPerSecond: 1_000_000 });
    expect(v.bandwidth[1]!.note).toMatch(/did not take effect/);
  });

  it("matches each host port to this pod's DNAT rule only (by the id portmap tags its chain with), v4 and v6", () => {
    const v = buildLiveView(
      record({
        port_mappings: [
          { container_port: 80, host_port: 18080 },
          { protocol: 1, container_port: 53, host_port: 5353 },
          { container_port: 90, host_port: 19090 }, // another pod's rule exists for this port, not ours
          { container_port: 81, host_port: 0 },
        ],
      }),
      raw(),
      new Date(0),
    );
    expect(v.ports.map((p) => [p.found, p.note])).toEqual([
      [true, 'DNAT *:18080/tcp → 10.1.0.2:80'],
      [true, 'DNAT *:5353/udp → [fd00:1::2]:53'],
      [false, expect.stringMatching(/no DNAT rule for this mapping/)],
      [false, expect.stringMatching(/container-port-only: never passed to CNI/)],
    ]);
    expect(v.ports[0]!.rule).toBe('-A CNI-DN-mine -p tcp -m tcp --dport 18080 -j DNAT --to-destination 10.1.0.2:80');
  });

  it("lists a dual-stack pod's DNAT rule of each family, read from iptables-save and ip6tables-save", async () => {
    // recorded: Debian's portmap 1.1.1 ADD for 18080→80 of a pod with 10.150.20.2 and fd00:150:20::2
    const save = (name: string) => readFileSync(join(__dirname, '../fixtures/kernel', name), 'utf8');
    const answers: Record<string, string> = {
      [[kernelCommands.netfilter(4, undefined, 'nat').file, ...kernelCommands.netfilter(4, undefined, 'nat').args].join(' ')]:
        save('portmap-dual-iptables-save.txt'),
      [[kernelCommands.netfilter(6, undefined, 'nat').file, ...kernelCommands.netfilter(6, undefined, 'nat').args].join(' ')]:
        save('portmap-dual-ip6tables-save.txt'),
    };
    const runner = {
      run: async (req: ExecRequest): Promise<ExecResult> => {
        const line = [req.file, ...(req.args ?? [])].join(' ');
        return {
          command: line,
          exitCode: 0,
          signal: null,
          stdout: answers[line] ?? '[]',
          stderr: '',
          durationMs: 1,
          timedOut: false,
          canceled: false,
        };
      },
    };
    const live = await new KernelLiveReader(new LinuxKernelReader(runner)).read('/run/netns/pod', []);
    expect(live.errors).toEqual([]);
    const rec = record({ port_mappings: [{ container_port: 80, host_port: 18080 }] });
    rec.ipSelection = { ...rec.ipSelection!, eth0Ips: ['10.150.20.2', 'fd00:150:20::2'] };
    const [port] = buildLiveView(rec, live, new Date(0)).ports;
    expect(port!.found).toBe(true);
    expect(port!.rules).toEqual([
      '-A CNI-DN-d2efcb24d383b390721b1 -p tcp -m tcp --dport 18080 -j DNAT --to-destination 10.150.20.2:80',
      '-A CNI-DN-d2efcb24d383b390721b1 -p tcp -m tcp --dport 18080 -j DNAT --to-destination [fd00:150:20::2]:80',
    ]);
    expect(port!.rule).toBe(port!.rules[0]);
  });
});
