/**
 * DNS paths and the path MTU audit with real parts: netns, Debian's bridge/host-local plugins, runc, a real DNS server
 * (Debian's dnsmasq-base, started by the test on the bridge's gateway address, answering fixed names) and the probe's
 * agents entered with nsenter. A second nameserver is an unused address on the pod's own subnet (silent); a DROP of
 * udp/53 that the test adds is traced and named; a name with 60 addresses does not fit a UDP answer, so TCP is used.
 * Path MTU: the test lowers the pod's host-side veth below the pod's eth0 (a black hole: the veth drops the larger
 * frames with no ICMP), and builds a router hop — a netns "far" behind a host veth of MTU 1300, with a second dnsmasq
 * there — so the host answers "fragmentation needed" (PMTU discovery works: a smaller MTU, not a failure).
 * Needs root; subnets, bridge and names are a lease of the test kit's allocator; each dnsmasq is stopped by its pid
 * and every rule, link and netns the test added is removed in afterAll.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
/** the dnsmasq processes the test started, stopped by pid in afterAll */
const servers: ChildProcess[] = [];
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
  await startDnsmasq(undefined, GW4);
});

/** dnsmasq answering fixed names on address:53, in the host's netns or the netns pinned at netnsPath */
async function startDnsmasq(netnsPath: string | undefined, address: string): Promise<void> {
  // 60 addresses for one name: more than a 512-byte UDP answer holds, so the server sets TC and the query goes to TCP
  const big = Array.from({ length: 60 }, (_, i) => `--address=/big.test/10.255.0.${i + 1}`);
  const args = [
    '--keep-in-foreground',
    '--conf-file=/dev/null',
    '--pid-file=',
    '--no-resolv',
    '--no-hosts',
    '--bind-interfaces',
    `--listen-address=${address}`,
    '--except-interface=lo',
    '--address=/name.test/10.0.0.9',
    // no address: dnsmasq answers NXDOMAIN for nx.test and every name under it
    '--address=/nx.test/',
    ...big,
  ];
  // nsenter execs dnsmasq: the pid held is dnsmasq's own
  const child = netnsPath
    ? spawn('nsenter', [`--net=${netnsPath}`, 'dnsmasq', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn('dnsmasq', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  servers.push(child);
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const listening = () => sh(netnsPath ? 'nsenter' : 'ss', netnsPath ? [`--net=${netnsPath}`, 'ss', '-Hlnu'] : ['-Hlnu']);
  await until(() => listening().includes(`${address}:53`), { timeout: 10_000, what: `dnsmasq on ${address}:53 (${err})` });
}

/** the host-side veth of a pod's eth0: the host link whose ifindex the pod's eth0 names as its peer */
function hostVethOf(netnsPath: string): string {
  const [eth0] = JSON.parse(sh('nsenter', [`--net=${netnsPath}`, 'ip', '-j', 'link', 'show', 'eth0'])) as Array<{ link_index: number }>;
  const host = JSON.parse(sh('ip', ['-j', 'link', 'show'])) as Array<{ ifindex: number; ifname: string }>;
  return host.find((l) => l.ifindex === eth0!.link_index)!.ifname;
}

/** with PODSCOPE_TEST_RECORD=<dir>: the kernel states the narrow-link finder's unit tests are built from */
function record(name: string, netnsPath: string | undefined): void {
  const dir = process.env.PODSCOPE_TEST_RECORD;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const ip = (args: string[]) => (netnsPath ? sh('nsenter', [`--net=${netnsPath}`, 'ip', ...args]) : sh('ip', args));
  writeFileSync(join(dir, `${name}.links.json`), ip(['-d', '-j', 'addr', 'show']));
  writeFileSync(join(dir, `${name}.routes.json`), ip(['-j', '-4', 'route', 'show', 'table', 'all']));
}

const cleanups: Array<() => void> = [];

afterAll(async () => {
  for (const c of cleanups.reverse()) {
    try {
      c();
    } catch {
      // already gone
    }
  }
  for (const rule of addedRules) {
    try {
      sh('iptables', ['-D', ...rule]);
    } catch {
      // already gone
    }
  }
  for (const child of servers) {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((r) => child.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
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

describe('path MTU per path (real veths and a real router hop)', () => {
  it('a host veth lowered below the pod eth0: full-size packets vanish, a black hole that fails the probe, the host veth named', async () => {
    const netns = (await engine.status(id)).netnsPath!;
    const veth = hostVethOf(netns);
    sh('ip', ['link', 'set', veth, 'mtu', '1400']);
    cleanups.push(() => sh('ip', ['link', 'set', veth, 'mtu', '1500']));
    try {
      record('blackhole-pod', netns);
      record('blackhole-host', undefined);
      const r = await engine.probe(id);
      const gw = r.paths.find((p) => p.kind === 'gateway')!;
      expect(gw.verdict, 'the TCP connect itself needs only small packets').toBe('reachable');
      expect(gw.mtu, JSON.stringify(gw.mtu)).toMatchObject({
        interfaceMtu: 1500,
        blackHole: true,
        at: { node: 'host', netns: 'host', interface: veth, mtu: 1400 },
      });
      // a veth lets a received frame exceed its MTU by a VLAN header (4 bytes) before it drops it
      expect(gw.mtu!.pathMtu).toBeGreaterThanOrEqual(1400);
      expect(gw.mtu!.pathMtu).toBeLessThanOrEqual(1404);
      expect(probeSucceeded(r)).toBe(false);
      expect(failingPaths(r)).toContain(gw);
      const text = describeProbe(r);
      if (process.env.PODSCOPE_TEST_SHOW) process.stdout.write(text);
      expect(text).toContain(`!! MTU black hole`);
      expect(text).toContain(`narrowest link: ${veth} (host) MTU 1400`);
    } finally {
      sh('ip', ['link', 'set', veth, 'mtu', '1500']);
      cleanups.pop();
    }
  });

  it('a router hop with a smaller MTU answers "fragmentation needed": the smaller MTU is shown, and the probe does not fail', async () => {
    const lease = env.lease!;
    const far = lease.name('far');
    const [hostSide, farSide] = [lease.name('fh'), lease.name('ff')];
    const net = lease.subnet4(7).replace(/0\/24$/, '');
    const [hostAddr, farAddr] = [`${net}1`, `${net}2`];
    sh('ip', ['netns', 'add', far]);
    cleanups.push(() => sh('ip', ['netns', 'del', far]));
    sh('ip', ['link', 'add', hostSide, 'mtu', '1300', 'type', 'veth', 'peer', 'name', farSide, 'mtu', '1300']);
    cleanups.push(() => sh('ip', ['link', 'del', hostSide]));
    sh('ip', ['link', 'set', farSide, 'netns', far]);
    sh('ip', ['addr', 'add', `${hostAddr}/24`, 'dev', hostSide]);
    sh('ip', ['link', 'set', hostSide, 'up']);
    sh('ip', ['-n', far, 'addr', 'add', `${farAddr}/24`, 'dev', farSide]);
    sh('ip', ['-n', far, 'link', 'set', farSide, 'up']);
    sh('ip', ['-n', far, 'link', 'set', 'lo', 'up']);
    sh('ip', ['-n', far, 'route', 'add', env.subnet4, 'via', hostAddr]);
    await startDnsmasq(`/var/run/netns/${far}`, farAddr);
    const { id: other } = await engine.run({
      config: pod('far', { dns_config: { servers: [farAddr], searches: ['name.test'], options: [] } }),
    });
    const otherNetns = (await engine.status(other)).netnsPath!;
    // the env's pods route only their own subnet: the far subnet is reached through the gateway (the host routes it)
    sh('nsenter', [`--net=${otherNetns}`, 'ip', 'route', 'add', lease.subnet4(7), 'via', GW4]);
    record('router-pod', otherNetns);
    record('router-host', undefined);
    const r = await engine.probe(other);
    const dns = dnsTo(r, farAddr);
    expect(dns, dns.note).toMatchObject({ verdict: 'reachable', dns: { answers: ['A 10.0.0.9'] } });
    expect(dns.mtu, JSON.stringify(dns.mtu)).toMatchObject({
      pathMtu: 1300,
      interfaceMtu: 1500,
      blackHole: false,
      pmtud: true,
      at: { netns: 'host', interface: hostSide, mtu: 1300 },
    });
    expect(r.paths.find((p) => p.kind === 'gateway')?.mtu).toMatchObject({ pathMtu: 1500, blackHole: false });
    expect(failingPaths(r)).toEqual([]);
    expect(probeSucceeded(r)).toBe(true);
    if (process.env.PODSCOPE_TEST_SHOW) process.stdout.write(describeProbe(r));
  });
});
