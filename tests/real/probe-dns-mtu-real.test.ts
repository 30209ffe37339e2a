/**
 * DNS paths and the path MTU audit with real parts: netns, Debian's bridge/host-local plugins, runc, a real DNS server
 * (Debian's dnsmasq-base, started by the test on the bridge's gateway address, answering fixed names) and the probe's
 * agents entered with nsenter. A second nameserver is an unused address on the pod's own subnet (silent); a DROP of
 * udp/53 that the test adds is traced and named; a name with 60 addresses does not fit a UDP answer, so TCP is used.
 * Needs root; subnets, bridge and names are a lease of the test kit's allocator; dnsmasq is stopped by its pid and
 * every rule and link the test added is removed in afterAll.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { describeProbe } from '../../electron/cli/commands/probe';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { dnsPaths, failingPaths, probeSucceeded, type ProbePath, type ProbeReport } from '../../shared/domain/probe';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { until } from '../../testkit/until';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let env: RealEnv;
let engine: SandboxEngine;
let GW4: string;
/** an address on the pod's subnet nobody holds: a nameserver there never answers */
let SILENT: string;
let dnsmasq: ChildProcess | undefined;
/** iptables rules the test added (`-D` specs), removed in afterAll whatever happened */
const addedRules: string[][] = [];
let id: string;

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-dns', uid: `uid-${name}` }, hostname: name, ...extra };
}

const dnsTo = (r: ProbeReport, server: string): ProbePath => dnsPaths(r).find((d) => d.path.dns?.server === server)!.path;

beforeAll(async () => {
  env = await createRealEnv({ tag: 'dns', ipv4Only: true });
  GW4 = env.gateway4;
  SILENT = GW4.replace(/\.\d+$/, '.250');
  engine = await env.engine({ probeOnReady: false });
  // the bridge (and its gateway address, where dnsmasq listens) exists once the first pod is attached
  ({ id } = await engine.run({
    config: pod('dns', { dns_config: { servers: [GW4, SILENT], searches: ['name.test'], options: [] } }),
  }));
  // 60 addresses for one name: more than a 512-byte UDP answer holds, so the server sets TC and the query goes to TCP
  const big = Array.from({ length: 60 }, (_, i) => `--address=/big.test/10.255.0.${i + 1}`);
  dnsmasq = spawn(
    'dnsmasq',
    [
      '--keep-in-foreground',
      '--conf-file=/dev/null',
      '--pid-file=',
      '--no-resolv',
      '--no-hosts',
      '--bind-interfaces',
      `--listen-address=${GW4}`,
      '--except-interface=lo',
      '--address=/name.test/10.0.0.9',
      // no address: dnsmasq answers NXDOMAIN for nx.test and every name under it
      '--address=/nx.test/',
      ...big,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  dnsmasq.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  await until(() => sh('ss', ['-Hlnu']).includes(`${GW4}:53`), { timeout: 10_000, what: `dnsmasq on ${GW4}:53 (${err})` });
});

afterAll(async () => {
  for (const rule of addedRules) {
    try {
      sh('iptables', ['-D', ...rule]);
    } catch {
      // already gone
    }
  }
  if (dnsmasq?.pid !== undefined && dnsmasq.exitCode === null) {
    const gone = new Promise((r) => dnsmasq!.once('exit', r));
    process.kill(dnsmasq.pid, 'SIGTERM');
    await gone;
  }
  await env?.teardown();
});

describe('DNS paths from inside the pod (real dnsmasq)', () => {
  it('the server on the gateway answers the name with its address; the silent one times out and fails the probe', async () => {
    const r = await engine.probe(id);
    const ok = dnsTo(r, GW4);
    expect(ok, ok.note).toMatchObject({ verdict: 'reachable', measured: true, proto: 'udp' });
    expect(ok.dns).toMatchObject({ name: 'name.test', rcode: 'NOERROR', answers: ['A 10.0.0.9'], transport: 'udp' });
    expect(ok.rttMs).toBeGreaterThan(0);
    const silent = dnsTo(r, SILENT);
    expect(silent).toMatchObject({ verdict: 'timeout', measured: true });
    expect(probeSucceeded(r)).toBe(false);
    expect(failingPaths(r).map((p) => p.to)).toEqual([`${SILENT}:53`]);
    expect(r.dns).toMatchObject({ source: 'dns_config', servers: [GW4, SILENT] });
    expect(r.dns?.resolvConf).toContain(`nameserver ${GW4}`);
    const text = describeProbe(r);
    if (process.env.PODSCOPE_TEST_SHOW) process.stdout.write(text);
    expect(text).toContain(`reachable     dns      pod → ${GW4}:53/udp`);
    expect(text).toContain(`| nameserver ${SILENT}`);
  });

  it('NXDOMAIN for a name the server does not know is an answer; a truncated answer is fetched over TCP', async () => {
    const nx = dnsTo(await engine.probe(id, { dnsName: 'absent.nx.test' }), GW4);
    expect(nx, nx.note).toMatchObject({ verdict: 'reachable', dns: { rcode: 'NXDOMAIN', answers: [] } });
    const big = dnsTo(await engine.probe(id, { dnsName: 'big.test' }), GW4);
    expect(big, big.note).toMatchObject({ verdict: 'reachable', proto: 'tcp', dns: { transport: 'tcp', truncated: true } });
    expect(big.dns?.answers).toHaveLength(60);
  });

  it('a DROP of udp/53 on the host is traced and named with its rule', async () => {
    const comment = `podscope-test-dns-drop-${env.bridge}`;
    const rule = ['INPUT', '-d', `${GW4}/32`, '-p', 'udp', '--dport', '53', '-m', 'comment', '--comment', comment, '-j', 'DROP'];
    sh('iptables', ['-I', ...rule]);
    addedRules.push(rule);
    try {
      const r = await engine.probe(id, { trace: true });
      const p = dnsTo(r, GW4);
      expect(p.verdict).toBe('timeout');
      const drop = p.trace?.steps.find((s) => s.kind === 'netfilter' && s.verdict === 'DROP');
      expect(drop, JSON.stringify(p.trace?.steps.map((s) => s.detail))).toBeDefined();
      expect(drop).toMatchObject({ netns: 'host', table: 'filter', chain: 'INPUT', owner: null });
      expect(drop!.rule).toContain(comment);
      expect(p.why).toMatch(/DROP|dropped/i);
    } finally {
      sh('iptables', ['-D', ...rule]);
      addedRules.pop();
    }
  });
});
