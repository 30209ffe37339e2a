/**
 * Why a path failed, measured from the kernel: real netns, Debian's bridge/host-local/portmap plugins, real netfilter.
 * Foreign rules are added by the test to filter OUTPUT (the admin's, owned by nobody here), a blackhole route inside
 * the pod's netns; every one is removed again before the test ends. Subnets, bridge and host ports
 * from the test kit's allocator (a lease).
 */
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { pcapngBlocks } from '../../electron/engine/trace/capture';
import { LinuxProbeNet } from '../../electron/engine/netns/linux-probe-net';
import { RAW_TABLE_LOCK } from '../../electron/engine/kernel/netfilter-trace';
import { holdFileLockInProcess } from '../../electron/engine/os/file-lock';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { LinuxFlowTracer, type FlowSpec } from '../../electron/engine/trace/flow-tracer';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { ProbePath, ProbeReport, TraceStep } from '../../shared/domain/probe';
import { traceTablesOf } from '../../testkit/netns-snapshot';
import type { RealEnv } from '../../testkit/throwaway-env';
import { cliFlagsOf, startTracedPod } from './helpers/traced-pod';
import { escapeRe } from '../../testkit/until';

const execFileP = promisify(execFile);
const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
// the env's, from its lease: set in beforeAll
let hostPort: number;
let GW4: string;
const ip4 = (args: string[]) => sh('iptables', args);

let podIp4 = '';

async function traced(id: string): Promise<ProbeReport> {
  const before = traceTablesOf(netnsA, { hostMarksOf: process.pid });
  const r = await engine.probe(id, { trace: true });
  expect(traceTablesOf(netnsA, { hostMarksOf: process.pid }), 'raw tables and nft tables after the trace').toEqual(before);
  expect(r.traced).toBe(true);
  return r;
}

const hostPath = (r: ProbeReport, to: string) => r.paths.find((p) => p.kind === 'hostPort' && p.to === `${to}:${hostPort}`)!;
const decisive = (p: ProbePath): TraceStep | undefined => p.trace?.steps.find((s) => s.decisive);

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-trc', uid: `uid-${name}` }, hostname: name, ...extra };
}

let env: RealEnv;
let engine: SandboxEngine;
let a: string;
let netnsA: string;

/** a flow to the pod's port 80 traced in the pod's netns alone (no other engine traces there) */
const podOnlyFlow = (sport: number): FlowSpec => ({
  sport,
  family: 4,
  dst: podIp4,
  dport: 80,
  netns: [{ key: a, path: netnsA, label: "the pod's netns" }],
  routes: [],
});

beforeAll(async () => {
  ({ env, engine, id: a, netnsPath: netnsA, podIp4, hostPort } = await startTracedPod('trc'));
  GW4 = env.gateway4;
});

afterAll(async () => {
  await env?.teardown();
});

describe('connect errors reported as what they were', () => {
  it('a blackhole route to the gateway inside the pod makes the gateway path unreachable, not a timeout', async () => {
    sh('nsenter', [`--net=${netnsA}`, 'ip', 'route', 'add', 'blackhole', `${GW4}/32`]);
    try {
      const r = await engine.probe(a);
      const gw = r.paths.find((p) => p.kind === 'gateway' && p.family === 4)!;
      expect(gw).toMatchObject({ verdict: 'unreachable', measured: true });
      expect(gw.note).toContain('EINVAL');
      // the v6 gateway path has no such route: still reachable
      expect(r.paths.find((p) => p.kind === 'gateway' && p.family === 6)?.verdict).toBe('reachable');
    } finally {
      sh('nsenter', [`--net=${netnsA}`, 'ip', 'route', 'del', 'blackhole', `${GW4}/32`]);
    }
  });
});

describe('probe --trace: why a path failed, from the kernel', () => {
  it('a reachable host-port path: the DNAT step is owned by portmap, the network and the sandbox', async () => {
    const r = await traced(a);
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('reachable');
    const dnat = p.trace!.steps.find((s) => s.kind === 'netfilter' && s.verdict === 'DNAT')!;
    expect(dnat).toMatchObject({
      netns: 'host',
      table: 'nat',
      family: 4,
      owner: { plugin: 'portmap', network: env.network, sandboxId: a },
    });
    expect(dnat.chain).toMatch(/^CNI-DN-/);
    expect(dnat.rule).toContain(`--to-destination ${podIp4}:8080`);
    expect(p.trace!.flow.dport).toBe(hostPort);
    expect(p.why).toContain('portmap');
    // the flow's own conntrack entry shows the DNAT
    expect(p.trace!.steps.some((s) => s.kind === 'conntrack' && s.detail.includes(`DNAT 127.0.0.1:${hostPort} → ${podIp4}:8080`))).toBe(
      true,
    );
    // every measured path was traced, each with its own source port
    const sports = r.paths.filter((x) => x.measured).map((x) => x.trace!.flow.sport);
    expect(new Set(sports).size).toBe(sports.length);
  });

  it('a foreign DROP rule in filter OUTPUT for the pod: the trace names table, chain and rule, owned by nobody', async () => {
    const rule = ['OUTPUT', '-d', `${podIp4}/32`, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'fw-block', '-j', 'DROP'];
    // a rule ahead of it that matches nothing, so its line number is not 1 by chance
    const pad = ['OUTPUT', '-d', '192.0.2.1/32', '-m', 'comment', '--comment', 'fw-block-pad', '-j', 'ACCEPT'];
    ip4(['-I', ...rule]);
    ip4(['-I', ...pad]);
    let r: ProbeReport;
    let lineNumbers: string;
    try {
      r = await traced(a);
      lineNumbers = ip4(['-L', 'OUTPUT', '--line-numbers', '-n']);
    } finally {
      ip4(['-D', ...pad]);
      ip4(['-D', ...rule]);
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('timeout');
    const d = decisive(p)!;
    const want = Number(/^(\d+) .*\/\* fw-block \*\//m.exec(lineNumbers)?.[1]);
    expect(want).toBeGreaterThan(1);
    expect(d).toMatchObject({
      kind: 'netfilter',
      netns: 'host',
      table: 'filter',
      chain: 'OUTPUT',
      verdict: 'DROP',
      owner: null,
      position: want,
    });
    expect(d.detail).toMatch(new RegExp(`^filter/OUTPUT rule ${want} \\(handle \\d+\\): DROP`));
    expect(d.rule).toContain('fw-block');
    expect(p.why).toMatch(/^dropped in filter\/OUTPUT of the host by `-A OUTPUT -d .*fw-block.* -j DROP`, a rule no CNI plugin installed$/);
  });

  it('a REJECT --reject-with tcp-reset rule: refused, with the rule named, not blamed on the pod', async () => {
    const rule = [
      'OUTPUT',
      '-d',
      `${podIp4}/32`,
      '-p',
      'tcp',
      '--dport',
      '8080',
      '-m',
      'comment',
      '--comment',
      'fw-reject',
      '-j',
      'REJECT',
      '--reject-with',
      'tcp-reset',
    ];
    ip4(['-I', ...rule]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      ip4(['-D', ...rule]);
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('refused');
    expect(decisive(p)).toMatchObject({ kind: 'netfilter', table: 'filter', chain: 'OUTPUT', verdict: 'REJECT', owner: null });
    expect(p.why).toContain('refused by a REJECT rule in filter/OUTPUT');
    expect(p.why).toContain('not by the pod');
    expect(p.trace!.steps.find((s) => s.kind === 'deliver')!.netns).toBe('host');
  });

  it('a blackhole route in the pod netns: unreachable, and the route step says blackhole', async () => {
    sh('nsenter', [`--net=${netnsA}`, 'ip', 'route', 'add', 'blackhole', `${GW4}/32`]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      sh('nsenter', [`--net=${netnsA}`, 'ip', 'route', 'del', 'blackhole', `${GW4}/32`]);
    }
    const gw = r.paths.find((p) => p.kind === 'gateway' && p.family === 4)!;
    expect(gw.verdict).toBe('unreachable');
    expect(decisive(gw)).toMatchObject({ kind: 'route', netns: a, verdict: 'blackhole' });
    expect(gw.why).toBe(`route to ${GW4} in the pod's netns is blackhole (blackhole ${GW4})`);
  });
});

describe('foreign rules on forwarded and NATed paths', () => {
  it('a foreign DROP in filter FORWARD between two pods: the peer path names FORWARD and its rule, owned by nobody', async () => {
    const { id: b } = await engine.run({ config: pod('fwd') });
    const ipB = (await engine.status(b)).ip;
    // bridged pod-to-pod traffic passes iptables FORWARD (br_netfilter, bridge-nf-call-iptables=1)
    const rule = ['FORWARD', '-s', `${podIp4}/32`, '-d', `${ipB}/32`, '-p', 'tcp', '-m', 'comment', '--comment', 'fw-fwd', '-j', 'DROP'];
    ip4(['-I', ...rule]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      ip4(['-D', ...rule]);
      await engine.remove(b);
    }
    const p = r.paths.find((x) => x.kind === 'peer' && x.from === 'pod' && x.to.startsWith(`${ipB}:`))!;
    expect(p.verdict).toBe('timeout');
    const d = decisive(p)!;
    expect(d).toMatchObject({ kind: 'netfilter', netns: 'host', table: 'filter', chain: 'FORWARD', verdict: 'DROP', owner: null });
    expect(d.rule).toContain('fw-fwd');
    expect(p.why).toMatch(/^dropped in filter\/FORWARD of the host by `-A FORWARD -s .*fw-fwd.* -j DROP`, a rule no CNI plugin installed$/);
    // the way back (peer → pod): the pod's SYN-ACK matches the same rule, dropped on its way back
    const back = r.paths.find((x) => x.kind === 'peer' && x.from === 'peer fwd' && x.family === 4)!;
    expect(back.verdict).toBe('timeout');
    expect(decisive(back)).toMatchObject({ table: 'filter', chain: 'FORWARD', verdict: 'DROP', owner: null, reply: true });
    expect(back.why).toMatch(/^dropped \(on the way back\) in filter\/FORWARD of the host by `-A FORWARD .*fw-fwd/);
    // IPv6 between the same pods is not matched: reachable
    expect(r.paths.find((x) => x.kind === 'peer' && x.from === 'pod' && x.family === 6)?.verdict).toBe('reachable');
  });

  it('a foreign DROP in FORWARD on a container port between two pods: that peer port path fails naming the rule, the network path stays reachable', async () => {
    const { id: b } = await engine.run({ config: pod('svc', { port_mappings: [{ container_port: 80, host_port: 0 }] }) });
    const ipB = (await engine.status(b)).ip;
    // the comment carries this file's lease: parallel files' rules are never matched, and teardown removes only ours
    const mark = env.lease!.name('-fwport');
    const rule = ['FORWARD', '-d', `${ipB}/32`, '-p', 'tcp', '--dport', '80', '-m', 'comment', '--comment', mark, '-j', 'DROP'];
    ip4(['-I', ...rule]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      ip4(['-D', ...rule]);
      await engine.remove(b);
    }
    const toPort = r.paths.find((x) => x.kind === 'peerPort' && x.from === 'pod' && x.to === `${ipB}:80`)!;
    expect(toPort).toMatchObject({ verdict: 'timeout', declaredBy: 'port mapping 0', listener: 'responder' });
    const d = decisive(toPort)!;
    expect(d).toMatchObject({ kind: 'netfilter', netns: 'host', table: 'filter', chain: 'FORWARD', verdict: 'DROP', owner: null });
    expect(d.rule).toContain(mark);
    expect(toPort.why).toMatch(
      new RegExp(`^dropped in filter/FORWARD of the host by \`-A FORWARD -d ${escapeRe(ipB)}/32 .*${mark}.* -j DROP\``),
    );
    // the network path between the same pods (a port the probe picked) is untouched by a rule on port 80
    const net = r.paths.find((x) => x.kind === 'peer' && x.from === 'pod' && x.to.startsWith(`${ipB}:`))!;
    expect(net.verdict).toBe('reachable');
    expect(Number(net.to.split(':').pop())).not.toBe(80);
    // b → a: a declares 8080, not blocked
    expect(r.paths.find((x) => x.kind === 'peerPort' && x.from === 'peer svc' && x.family === 4)).toMatchObject({
      verdict: 'reachable',
      to: `${podIp4}:8080`,
    });
  });

  it('a foreign nat rule that DNATs the host port elsewhere: the DNAT is named, owned by nobody, and the pod is not blamed', async () => {
    const elsewhere = env.port(2);
    const rule = ['OUTPUT', '-d', '127.0.0.1/32', '-p', 'tcp', '--dport', String(hostPort), '-m', 'comment', '--comment', 'fw-dnat'];
    const dnat = [...rule, '-j', 'DNAT', '--to-destination', `127.0.0.1:${elsewhere}`];
    ip4(['-t', 'nat', '-I', ...dnat]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      ip4(['-t', 'nat', '-D', ...dnat]);
    }
    const p = hostPath(r, '127.0.0.1');
    // nothing listens on the other port of the host: the host's own stack answers with a RST
    expect(p.verdict).toBe('refused');
    const d = decisive(p)!;
    expect(d).toMatchObject({ kind: 'netfilter', netns: 'host', table: 'nat', chain: 'OUTPUT', verdict: 'DNAT', owner: null });
    expect(d.rule).toContain('fw-dnat');
    expect(p.why).toMatch(
      new RegExp(
        `^sent elsewhere by nat/OUTPUT of the host: \`-A OUTPUT .*fw-dnat.* -j DNAT --to-destination 127\\.0\\.0\\.1:${elsewhere}\`, a rule no CNI plugin installed, DNATed it to 127\\.0\\.0\\.1:${elsewhere} instead of the pod's netns; refused there$`,
      ),
    );
    expect(p.trace!.steps.find((s) => s.kind === 'deliver')).toMatchObject({ netns: 'host' });
    // portmap's DNAT for this pod was never reached
    expect(p.trace!.steps.some((s) => s.kind === 'netfilter' && s.owner?.plugin === 'portmap' && s.verdict === 'DNAT')).toBe(false);
    // the gateway-address path is not matched by the rule and still lands in the pod
    expect(hostPath(r, GW4).verdict).toBe('reachable');
  });
});

describe('drops outside netfilter', () => {
  it('rp_filter=1 in the pod with no route back to the source: a drop step naming IP_RPFILTER and where the kernel freed it', async () => {
    const ns = (args: string[]) => sh('nsenter', [`--net=${netnsA}`, ...args]);
    const sysctl = (k: string) => ns(['sysctl', '-n', k]).trim();
    const keys = ['net.ipv4.conf.all.rp_filter', 'net.ipv4.conf.eth0.rp_filter'];
    const was = keys.map(sysctl);
    // the host-port SYN reaches the pod from the gateway address (portmap masquerades it); with the route back to
    // that address a blackhole, strict reverse-path filtering drops it on arrival
    // (the pod would not answer the host's ARP either: a permanent neighbour entry lets the SYN leave the host)
    const mac = (JSON.parse(ns(['ip', '-j', 'link', 'show', 'eth0'])) as Array<{ address: string }>)[0]!.address;
    sh('ip', ['neigh', 'replace', podIp4, 'lladdr', mac, 'dev', env.bridge, 'nud', 'permanent']);
    for (const k of keys) ns(['sysctl', '-qw', `${k}=1`]);
    ns(['ip', 'route', 'add', 'blackhole', `${GW4}/32`]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      sh('ip', ['neigh', 'del', podIp4, 'dev', env.bridge]);
      ns(['ip', 'route', 'del', 'blackhole', `${GW4}/32`]);
      keys.forEach((k, i) => ns(['sysctl', '-qw', `${k}=${was[i]}`]));
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('timeout');
    const drop = p.trace!.steps.find((s) => s.kind === 'drop' && s.verdict === 'IP_RPFILTER')!;
    expect(drop, JSON.stringify(p.trace!.steps.filter((s) => s.kind === 'drop'))).toBeDefined();
    expect(drop.rule).toMatch(/^[a-z_0-9.]+\+0x[0-9a-f]+$/);
    expect(decisive(p)).toMatchObject({ kind: 'drop', verdict: 'IP_RPFILTER' });
    expect(p.why).toMatch(/^dropped by the kernel in \S+: IP_RPFILTER \(skb:kfree_skb\), no netfilter rule dropped it$/);
    // the instance the trace used is gone
    expect(readdirSync('/sys/kernel/tracing/instances').filter((n) => n.startsWith(`podscope-trace-${process.pid}-`))).toEqual([]);
  });
});

describe('seen-at hops (tcpdump on every interface of the path)', () => {
  /** the host end of the pod's veth, by the peer ifindex of its eth0 */
  const hostVeth = () => {
    const link = (JSON.parse(sh('nsenter', [`--net=${netnsA}`, 'ip', '-j', 'link', 'show', 'eth0'])) as Array<{ link_index: number }>)[0]!
      .link_index;
    return (JSON.parse(sh('ip', ['-j', 'link', 'show'])) as Array<{ ifindex: number; ifname: string }>).find((l) => l.ifindex === link)!
      .ifname;
  };
  const seen = (p: ProbePath, reply = false) =>
    p.trace!.steps.filter((s) => s.kind === 'seen' && !!s.reply === reply).map((s) => `${s.interface}:${s.seen ? 'seen' : 'not'}`);

  it('a reachable path is seen on every hop both ways, and the captures come as one pcapng with an interface per hop', async () => {
    const r = await traced(a);
    const p = hostPath(r, '127.0.0.1');
    const veth = hostVeth();
    expect(seen(p)).toEqual([`${env.bridge}:seen`, `${veth}:seen`, 'eth0:seen']);
    expect(seen(p, true)).toEqual(['eth0:seen', `${veth}:seen`, `${env.bridge}:seen`]);
    const { types, interfaces } = pcapngBlocks(Buffer.from(r.capture!.pcapngBase64, 'base64'));
    expect(types[0]).toBe(0x0a0d0d0a);
    expect(types.filter((t) => t === 1).length).toBe(r.capture!.interfaces.length);
    expect(interfaces).toEqual(r.capture!.interfaces);
    expect(interfaces).toEqual(expect.arrayContaining([`host/${env.bridge}`, `host/${veth}`, `${a.slice(0, 12)}/eth0`]));
    expect(types.filter((t) => t === 6).length).toBe(r.capture!.packets);
    expect(r.capture!.packets).toBeGreaterThan(0);
  });

  it('a tc drop on the host veth (a tbf smaller than any packet) is located between the bridge and the veth', async () => {
    const veth = hostVeth();
    sh('tc', ['qdisc', 'replace', 'dev', veth, 'root', 'tbf', 'rate', '1kbit', 'burst', '1', 'latency', '1ms']);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      sh('tc', ['qdisc', 'del', 'dev', veth, 'root']);
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('timeout');
    expect(seen(p)).toEqual([`${env.bridge}:seen`, `${veth}:not`, 'eth0:not']);
    expect(decisive(p)).toMatchObject({ kind: 'seen', interface: veth, seen: false });
    expect(p.why).toContain(`lost between bridge ${env.bridge} and host veth of the pod's netns`);
  });

  it('a disabled bridge port is located between the bridge and the veth', async () => {
    const veth = hostVeth();
    // a permanent neighbour entry: the SYN leaves the host (the pod's ARP reply would not come back through the port)
    const mac = (JSON.parse(sh('nsenter', [`--net=${netnsA}`, 'ip', '-j', 'link', 'show', 'eth0'])) as Array<{ address: string }>)[0]!
      .address;
    sh('ip', ['neigh', 'replace', podIp4, 'lladdr', mac, 'dev', env.bridge, 'nud', 'permanent']);
    // another pod keeps a port forwarding: with none the bridge itself loses its carrier and sends nothing
    const { id: other } = await engine.run({ config: pod('keep') });
    sh('bridge', ['link', 'set', 'dev', veth, 'state', '0']);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      sh('bridge', ['link', 'set', 'dev', veth, 'state', '3']);
      sh('ip', ['neigh', 'del', podIp4, 'dev', env.bridge]);
      await engine.remove(other);
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('timeout');
    expect(seen(p)).toEqual([`${env.bridge}:seen`, `${veth}:not`, 'eth0:not']);
    expect(decisive(p)).toMatchObject({ kind: 'seen', interface: veth, seen: false });
    expect(p.why).toContain(`between bridge ${env.bridge} and host veth of the pod's netns`);
  });
});

describe('traces side by side, and after a kill', () => {
  it('two traces at once (two pods) do not mix: each keeps only its own packets and its own DNAT', async () => {
    const hostPortB = env.port(1);
    const { id: b } = await engine.run({ config: pod('api', { port_mappings: [{ container_port: 9090, host_port: hostPortB }] }) });
    const stB = await engine.status(b);
    const net = new LinuxProbeNet(new NodeProcessRunner());
    const tracer = new LinuxFlowTracer(new NodeProcessRunner());
    const flow = (dport: number, key: string, path: string): FlowSpec => ({
      sport: tracer.allocatePort(),
      family: 4,
      dst: '127.0.0.1',
      dport,
      netns: [
        { key: 'host', label: 'the host' },
        { key, path, label: "the pod's netns" },
      ],
      routes: [],
    });
    const fa = flow(hostPort, a, netnsA);
    const fb = flow(hostPortB, b, stB.netnsPath!);
    const before = traceTablesOf(netnsA, { hostMarksOf: process.pid });
    const agent = await net.open(undefined);
    try {
      const [ta, tb] = await Promise.all([tracer.begin([fa]), tracer.begin([fb])]);
      await Promise.all([
        agent.connect('127.0.0.1', hostPort, 1500, 400, { localPort: fa.sport }),
        agent.connect('127.0.0.1', hostPortB, 1500, 400, { localPort: fb.sport }),
      ]);
      const [[ra], [rb]] = await Promise.all([ta.finish(), tb.finish()]);
      for (const [rec, f, podIp, other] of [
        [ra!, fa, podIp4, stB.ip],
        [rb!, fb, stB.ip, podIp4],
      ] as const) {
        const lines = [...rec.lines.values()].flat();
        const packets = lines.filter((l) => l.type === 'packet');
        expect(packets.length).toBeGreaterThan(0);
        for (const p of packets) expect([p.fields.SPORT, p.fields.DPORT]).toContain(String(f.sport));
        const rules = lines.flatMap((l) => (l.type === 'rule' && l.rule ? [l.rule] : []));
        expect(rules.some((r) => r.includes(`--to-destination ${podIp}:`))).toBe(true);
        expect(rules.some((r) => r.includes(`--to-destination ${other}:`))).toBe(false);
      }
    } finally {
      await agent.close();
      tracer.releasePort(fa.sport);
      tracer.releasePort(fb.sport);
      await engine.remove(b);
    }
    expect(traceTablesOf(netnsA, { hostMarksOf: process.pid })).toEqual(before);
  });

  it("a trace's end removes its TRACE rules even where one stands in a chain twice (`-D` deletes the first match only)", async () => {
    const tracer = new LinuxFlowTracer(new NodeProcessRunner());
    const sport = tracer.allocatePort();
    const flow: FlowSpec = {
      sport,
      family: 4,
      dst: '127.0.0.1',
      dport: hostPort,
      netns: [
        { key: 'host', label: 'the host' },
        { key: a, path: netnsA, label: "the pod's netns" },
      ],
      routes: [],
    };
    const before = traceTablesOf(netnsA, { hostMarksOf: process.pid });
    const inPod = (args: string[]) => sh('nsenter', [`--net=${netnsA}`, 'iptables', ...args]);
    // an `iptables -S` line appended once more, as iptables-restore reads it (the quoted comment kept whole)
    const appendAgain = (netns: string | undefined, rule: string) =>
      execFileSync(netns ? 'nsenter' : 'iptables-restore', netns ? [`--net=${netns}`, 'iptables-restore', '-n'] : ['-n'], {
        input: `*raw\n${rule}\nCOMMIT\n`,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
    const trace = await tracer.begin([flow]);
    try {
      // the trace's own OUTPUT rule, a second time, in the pod's netns and on the host (as a raced insert would leave it)
      const own = (rules: string) => rules.split('\n').find((l) => l.startsWith('-A OUTPUT') && l.includes(`--ports ${sport} `))!;
      const podRule = own(inPod(['-t', 'raw', '-S']));
      const hostRule = own(ip4(['-t', 'raw', '-S']));
      expect(podRule, "the trace's OUTPUT rule in the pod's netns").toBeDefined();
      expect(hostRule, "the trace's OUTPUT rule on the host").toBeDefined();
      appendAgain(netnsA, podRule);
      appendAgain(undefined, hostRule);
      expect(
        inPod(['-t', 'raw', '-S'])
          .split('\n')
          .filter((l) => l === podRule),
      ).toHaveLength(2);
    } finally {
      await trace.finish();
      tracer.releasePort(sport);
    }
    expect(traceTablesOf(netnsA, { hostMarksOf: process.pid })).toEqual(before);
  });

  it("a raw table another Podscope engine's trace created and left empty is deleted at this trace's end (whichever ends last deletes it)", async () => {
    // the other engine, still alive (its pid a sleeping child): its trace made `ip raw` in the pod's netns with its
    // comment, iptables added the base chain, and its rule is gone again, as when it ended before this trace did
    const other = spawn('sleep', ['300'], { stdio: 'ignore' });
    const inPod = (file: string, args: string[]) => sh('nsenter', [`--net=${netnsA}`, file, ...args]);
    const hasPodRawTable = () => spawnSync('nsenter', [`--net=${netnsA}`, 'nft', 'list', 'table', 'ip', 'raw']).status === 0;
    const tracer = new LinuxFlowTracer(new NodeProcessRunner());
    const sport = tracer.allocatePort();
    try {
      expect(hasPodRawTable(), "the pod's netns has no ip raw table before").toBe(false);
      inPod('nft', ['add', 'table', 'ip', 'raw', `{ comment "podscope-trace pid=${other.pid!}" ; }`]);
      inPod('iptables', ['-t', 'raw', '-A', 'OUTPUT', '-p', 'udp', '--dport', '9', '-j', 'ACCEPT']);
      inPod('iptables', ['-t', 'raw', '-D', 'OUTPUT', '-p', 'udp', '--dport', '9', '-j', 'ACCEPT']);
      const flow = podOnlyFlow(sport);
      const trace = await tracer.begin([flow]);
      expect(inPod('iptables', ['-t', 'raw', '-S']), "the trace's rule went into that table").toContain(`--ports ${sport} `);
      await trace.finish();
      expect(hasPodRawTable(), "the pod's netns's ip raw table after the trace").toBe(false);
    } finally {
      tracer.releasePort(sport);
      other.kill('SIGKILL');
      spawnSync('nsenter', [`--net=${netnsA}`, 'nft', 'delete', 'table', 'ip', 'raw']);
    }
  });

  it("a trace adds its rules only once no other Podscope process holds the raw tables' lock (another trace's read-then-delete of an empty table would take them)", async () => {
    // this test stands in for another engine in the middle of its end step: it holds the host-wide lock
    const other = await holdFileLockInProcess(RAW_TABLE_LOCK, 10);
    expect(other, "the raw tables' lock, taken by the test").toBeDefined();
    const tracer = new LinuxFlowTracer(new NodeProcessRunner());
    const sport = tracer.allocatePort();
    const flow = podOnlyFlow(sport);
    const inPodRules = () => sh('nsenter', [`--net=${netnsA}`, 'iptables', '-t', 'raw', '-S']);
    let released = false;
    try {
      const begun = tracer.begin([flow]);
      begun.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      // a wait that is the behaviour: for a second, while the lock is held, the trace has added nothing
      await new Promise((res) => setTimeout(res, 1000));
      expect(inPodRules(), 'TRACE rules added while another process held the lock').not.toContain(`--ports ${sport} `);
      other!.release();
      released = true;
      const trace = await begun;
      expect(inPodRules(), 'the TRACE rules once the lock was let go').toContain(`--ports ${sport} `);
      await trace.finish();
    } finally {
      if (!released) other?.release();
      tracer.releasePort(sport);
    }
  });

  // Every monitor in a netns receives every traced packet there (the host's is shared by every trace of every file
  // running beside this one): the other trace's events and the flood must not overflow the probe's monitor (ENOBUFS).
  it('beside another trace and a flood of other traffic: a complete trace naming the DROP at its iptables line number', async () => {
    const lineOf = (text: string) => Number(/^(\d+) .*\/\* fw-pos \*\//m.exec(text)?.[1]);
    const hostPortB = env.port(2);
    const { id: b } = await engine.run({ config: pod('busy', { port_mappings: [{ container_port: 9191, host_port: hostPortB }] }) });
    const stB = await engine.status(b);
    // a rule ahead of the DROP (matching nothing), so its line number is not 1 by chance
    const pad = ['OUTPUT', '-d', '192.0.2.1/32', '-m', 'comment', '--comment', 'fw-pos-pad', '-j', 'ACCEPT'];
    const rule = ['OUTPUT', '-d', `${podIp4}/32`, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'fw-pos', '-j', 'DROP'];
    ip4(['-I', ...rule]);
    ip4(['-I', ...pad]);
    // the other trace: its own flow, connected over and over while the probe runs (every packet of it traced, so the
    // probe's monitor in the host receives those events too); the flood: ICMP at the gateway through INPUT's rules
    const tracer = new LinuxFlowTracer(new NodeProcessRunner());
    const net = new LinuxProbeNet(new NodeProcessRunner());
    const other: FlowSpec = {
      sport: tracer.allocatePort(),
      family: 4,
      dst: '127.0.0.1',
      dport: hostPortB,
      netns: [
        { key: 'host', label: 'the host' },
        { key: b, path: stB.netnsPath!, label: "the other pod's netns" },
      ],
      routes: [],
    };
    const flood = spawn('ping', ['-f', '-q', '-c', '20000', GW4], { stdio: 'ignore' });
    const agent = await net.open(undefined);
    let stop = false;
    let r: ProbeReport;
    let lineNumbers: string;
    let lineNumbersBefore: string;
    let handle: string | undefined;
    const seenLines = new Set<number>();
    try {
      const t = await tracer.begin([other]);
      // Other files and Playwright's specs add and remove their own rules in the host's OUTPUT chain meanwhile, which
      // moves this rule's line number: it is read just before and just after the probe and every 50 ms during it (a
      // spec's rule came and went within one probe: CI, [2, 2] read, 3 named), and the trace must name one of those,
      // along with the rule's nft handle, which no other rule changes
      lineNumbersBefore = ip4(['-L', 'OUTPUT', '--line-numbers', '-n']);
      // (nft does not print iptables' comments: the rule is found by its match, on this lease's pod address)
      handle = new RegExp(`ip daddr ${escapeRe(podIp4)} tcp dport 8080 .*drop # handle (\\d+)`).exec(
        sh('nft', ['-a', 'list', 'chain', 'ip', 'filter', 'OUTPUT']),
      )?.[1];
      const busy = (async () => {
        while (!stop) await agent.connect('127.0.0.1', hostPortB, 300, 300, { localPort: other.sport }).catch(() => undefined);
      })();
      const watch = (async () => {
        while (!stop) {
          const out = await execFileP('iptables', ['-L', 'OUTPUT', '--line-numbers', '-n']).catch(() => undefined);
          const n = out ? lineOf(out.stdout) : NaN;
          if (Number.isInteger(n)) seenLines.add(n);
          await new Promise((res) => setTimeout(res, 50));
        }
      })();
      try {
        r = await engine.probe(a, { trace: true });
      } finally {
        stop = true;
        await busy;
        await watch;
        await t.finish();
      }
      lineNumbers = ip4(['-L', 'OUTPUT', '--line-numbers', '-n']);
    } finally {
      flood.kill('SIGKILL');
      await agent.close();
      tracer.releasePort(other.sport);
      ip4(['-D', ...pad]);
      ip4(['-D', ...rule]);
      await engine.remove(b);
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('timeout');
    // nothing lost: not partial, and no path of the probe misses a netfilter part
    expect(p.trace!.missing.filter((m) => m.startsWith('netfilter:'))).toEqual([]);
    expect(p.trace!.partial).toBeUndefined();
    expect(r.paths.filter((x) => x.trace?.partial).map((x) => x.trace!.missing)).toEqual([]);
    const d = decisive(p)!;
    const wanted = [lineOf(lineNumbersBefore!), lineOf(lineNumbers), ...seenLines];
    expect(Math.min(...wanted)).toBeGreaterThan(1);
    expect(handle).toMatch(/^\d+$/);
    expect(d).toMatchObject({ kind: 'netfilter', table: 'filter', chain: 'OUTPUT', verdict: 'DROP' });
    expect(wanted).toContain(d.position);
    expect(d.detail).toMatch(new RegExp(`^filter/OUTPUT rule ${d.position} \\(handle ${handle}\\): DROP`));
    expect(p.why).toMatch(/^dropped in filter\/OUTPUT of the host by `-A OUTPUT .*fw-pos/);
  });

  it('podscope probe --trace: the why and the steps in text, the trace in JSON, exit 5 naming the failure', async () => {
    await engine.close();
    const flags = cliFlagsOf(env);
    const cli = (args: string[]) =>
      spawnSync(process.execPath, ['bin/podscope.mjs', 'probe', a, '--trace', ...args, ...flags], {
        cwd: join(__dirname, '../..'),
        encoding: 'utf8',
      });
    const rule = ['OUTPUT', '-d', `${podIp4}/32`, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'fw-block', '-j', 'DROP'];
    const pcapFile = join(env.options.stateDir!, 'trace.pcapng');
    ip4(['-I', ...rule]);
    let text: ReturnType<typeof cli>;
    let json: ReturnType<typeof cli>;
    try {
      text = cli(['--pcap', pcapFile]);
      json = cli(['-o', 'json']);
    } finally {
      ip4(['-D', ...rule]);
    }
    expect(text.status).toBe(5);
    expect(text.stderr).toMatch(/podscope probe: \d+ packets on \d+ hops written to /);
    const blocks = pcapngBlocks(readFileSync(pcapFile));
    expect(blocks.types[0]).toBe(0x0a0d0d0a);
    expect(blocks.interfaces.length).toBeGreaterThanOrEqual(3);
    expect(text.stdout).toContain('why: dropped in filter/OUTPUT of the host by `-A OUTPUT -d');
    expect(text.stdout).toMatch(
      /▶ netfilter +host +filter\/OUTPUT rule \d+ \(handle \d+\): DROP( \(\d+ packets\))? {2}\[owner: none\] {2}-A OUTPUT .*fw-block/,
    );
    expect(text.stdout).toMatch(new RegExp(`\\[owner: portmap · ${escapeRe(env.network)} · [0-9a-f]{12}\\]`));
    expect(text.stderr).toContain('hostPort host → 127.0.0.1');
    const doc = JSON.parse(json.stdout) as ProbeReport;
    expect(doc.traced).toBe(true);
    expect(json.status).toBe(5);
    const p = hostPath(doc, '127.0.0.1');
    expect(p.trace!.steps.find((s) => s.decisive)).toMatchObject({ table: 'filter', chain: 'OUTPUT', verdict: 'DROP', owner: null });
    engine = await env.engine({ probeOnReady: false });
  });
});
