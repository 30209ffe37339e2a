/**
 * Why a path failed, measured from the kernel: real netns, Debian's bridge/host-local/portmap plugins, real netfilter.
 * Foreign rules are added by the test to filter OUTPUT (the admin's, owned by nobody here), a blackhole route inside
 * the pod's netns; every one is removed again before the test ends. Subnet 10.180.0.0/24, bridge psc-trc.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/sandbox/service';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { ProbePath, ProbeReport, TraceStep } from '../../shared/domain/probe';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const hostPort = 25000 + Math.floor(Math.random() * 900);
const GW4 = '10.180.0.1';
const ip4 = (args: string[]) => sh('iptables', args);

/** the raw tables (v4, v6) of the host and a netns, and the nf_tables table list: a trace leaves them as they were */
function rawState(netnsPath: string): string[] {
  const save = (cmd: string[]) =>
    sh(cmd[0]!, cmd.slice(1))
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
  const inNs = (c: string[]) => ['nsenter', `--net=${netnsPath}`, ...c];
  return [
    ...save(['iptables-save', '-t', 'raw']),
    ...save(['ip6tables-save', '-t', 'raw']),
    ...save(inNs(['iptables-save', '-t', 'raw'])).map((l) => `pod ${l}`),
    ...save(inNs(['ip6tables-save', '-t', 'raw'])).map((l) => `pod6 ${l}`),
    ...save(['nft', 'list', 'tables']),
    ...save(inNs(['nft', 'list', 'tables'])).map((l) => `pod ${l}`),
  ];
}

let podIp4 = '';

async function traced(id: string): Promise<ProbeReport> {
  const before = rawState(netnsA);
  const r = await engine.probe(id, { trace: true });
  expect(rawState(netnsA), 'raw tables and nft tables after the trace').toEqual(before);
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

beforeAll(async () => {
  env = await createRealEnv({ tag: 'trc', subnet: 180, ipMasq: true });
  engine = await env.engine({ probeOnReady: false });
  ({ id: a } = await engine.run({ config: pod('web', { port_mappings: [{ container_port: 8080, host_port: hostPort }] }) }));
  const st = await engine.status(a);
  netnsA = st.netnsPath!;
  podIp4 = st.ip;
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
    ip4(['-I', ...rule]);
    let r: ProbeReport;
    try {
      r = await traced(a);
    } finally {
      ip4(['-D', ...rule]);
    }
    const p = hostPath(r, '127.0.0.1');
    expect(p.verdict).toBe('timeout');
    const d = decisive(p)!;
    expect(d).toMatchObject({ kind: 'netfilter', netns: 'host', table: 'filter', chain: 'OUTPUT', verdict: 'DROP', owner: null });
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
