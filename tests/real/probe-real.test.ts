/**
 * The reachability probe with real parts: netns, Debian's bridge/host-local (v4+v6)/portmap plugins, runc, and the
 * probe's agents entered with nsenter. Two pods share a host port, a third has its pause killed. After every probe
 * nothing the probe started is left: no agent process in a pod's netns, no listener on the bridge address, no nat
 * rule that was not there before. Needs root; the bridge, subnets and host port are a lease of the test kit's
 * allocator; every resource is removed in afterAll.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endKeptProbeAgents, LinuxProbeNet } from '../../electron/engine/netns/linux-probe-net';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { ProbeReport } from '../../shared/domain/probe';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const run = promisify(execFile);
const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
// the env's, from its lease: set in beforeAll
let hostPort: number;
let GW4: string;
let V4: string;
let V6: string;

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-t1', uid: `uid-${name}` }, hostname: name, ...extra };
}

/** pids whose network namespace is the one pinned at path */
function pidsInNetns(path: string): number[] {
  const ino = statSync(path).ino;
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        return readlinkSync(`/proc/${d}/ns/net`) === `net:[${ino}]` ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}

function ppid(pid: number): number | undefined {
  try {
    return Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

const natLinesFor = (ids: string[]) =>
  ['iptables', 'ip6tables'].flatMap((t) =>
    sh(t, ['-t', 'nat', '-S'])
      .split('\n')
      .filter((l) => ids.some((id) => l.includes(id)) || l.includes(V4) || l.includes(V6)),
  );
const bridgeListeners = () =>
  sh('ss', ['-Htln'])
    .split('\n')
    .filter((l) => l.includes(GW4) || l.includes(`${V6}:1`));

const timeWaitIn = (netnsPath: string) =>
  sh('nsenter', [`--net=${netnsPath}`, 'ss', '-Htan', 'state', 'time-wait'])
    .split('\n')
    .filter(Boolean);

let env: RealEnv;
let engine: SandboxEngine;
let a: string;
let b: string;
const netnsOf = new Map<string, string>();

async function probeAndCheckLeaks(id: string): Promise<ProbeReport> {
  const natBefore = natLinesFor([a, b]).sort();
  const report = await engine.probe(id);
  // every agent ended by pid before probe() returned: only the pause process is left in each pod's netns
  for (const [sid, path] of netnsOf) {
    const st = await engine.status(sid);
    // the pause container is the pause process and what it runs (busybox sleep); anything else came from the probe
    const left = pidsInNetns(path).filter((p) => p !== st.pause.pid && ppid(p) !== st.pause.pid);
    const cmd = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 80);
      } catch {
        return '?';
      }
    };
    expect(left.map(cmd), `processes left in ${sid.slice(0, 12)}'s netns`).toEqual([]);
    // connections answered by the probe's own responders end with a reset: no TIME-WAIT entry stays in the pod for
    // a minute (FINs crossing used to leave one, which a later socket check of the pod then found)
    expect(timeWaitIn(path), `TIME-WAIT entries in ${sid.slice(0, 12)}'s netns`).toEqual([]);
  }
  expect(bridgeListeners()).toEqual([]);
  expect(natLinesFor([a, b]).sort()).toEqual(natBefore);
  return report;
}

beforeAll(async () => {
  env = await createRealEnv({ tag: 't1' });
  hostPort = env.port(0);
  GW4 = env.gateway4;
  V4 = subnetTextPrefix(env.subnet4);
  V6 = subnetTextPrefix(env.subnet6!);
  // probe-on-ready is checked on its own below; these tests ask for probes explicitly
  engine = await env.engine({ probeOnReady: false });
});

afterAll(async () => {
  await env?.teardown();
});

describe('reachability probe on a real bridge (v4 + v6) with portmap', () => {
  it('warns before creation when the host port is already held by a ready sandbox', async () => {
    ({ id: a } = await engine.run({ config: pod('first', { port_mappings: [{ container_port: 8080, host_port: hostPort }] }) }));
    netnsOf.set(a, (await engine.status(a)).netnsPath!);
    const second = pod('second', {
      port_mappings: [
        { container_port: 9090, host_port: hostPort },
        { container_port: 7070, host_port: 0 },
      ],
    });
    const preview = await engine.preview({ config: second });
    expect(preview.hostPortConflicts).toEqual([
      { hostPort, protocol: 'tcp', hostIP: '', holders: [{ id: a, name: expect.stringContaining('first') }] },
    ]);
    ({ id: b } = await engine.run({ config: second }));
    netnsOf.set(b, (await engine.status(b)).netnsPath!);
  });

  it('a mapping with no listener in the pod is reachable through the probe responder, answered by that pod', async () => {
    const report = await probeAndCheckLeaks(a);
    expect(report.errors).toEqual([]);
    const hp = report.paths.filter((p) => p.kind === 'hostPort');
    expect(hp.map((p) => p.to).sort()).toEqual([`${GW4}:${hostPort}`, `127.0.0.1:${hostPort}`, `[${V6}:1]:${hostPort}`].sort());
    for (const p of hp) {
      expect(p, p.to).toMatchObject({ verdict: 'reachable', answeredBy: a, listener: 'responder', measured: true });
      expect(p.rttMs).toBeGreaterThan(0);
    }
    // the connects, and the MTU audit's echoes beside them
    expect(report.measuredBy).toBe(report.paths.some((p) => p.mtu) ? 'TCP connect, DF-set ICMP echoes for the path MTU' : 'TCP connect');
    expect(Date.parse(report.measuredAt)).not.toBeNaN();
  });

  it("the second pod's host-port paths are shadowed by the first (its DNAT jump comes first), and status names the winner", async () => {
    const report = await probeAndCheckLeaks(b);
    // a figure for the closing note, not an assertion: this pod has 2 mappings and 1 peer
    console.log(`probe of a pod with 2 mappings and 1 peer: ${report.durationMs.toFixed(0)} ms, ${report.paths.length} paths`);
    const hp = report.paths.filter((p) => p.kind === 'hostPort');
    expect(hp.length).toBe(3);
    for (const p of hp) expect(p, p.to).toMatchObject({ verdict: 'shadowed', answeredBy: a, measured: true });
    // the container-port-only mapping goes straight to the pod IP
    const pp = report.paths.filter((p) => p.kind === 'podPort');
    expect(pp.map((p) => p.family).sort()).toEqual([4, 6]);
    for (const p of pp) expect(p, p.to).toMatchObject({ verdict: 'reachable', answeredBy: b, listener: 'responder' });
    const st = await engine.status(b);
    expect(st.hostPortConflicts).toEqual([
      {
        hostPort,
        protocol: 'tcp',
        hostIP: '',
        winner: a,
        winnerName: expect.stringContaining('first'),
        shadowed: [b],
        winnerFrom: 'dnat-chain',
      },
    ]);
  });

  it('pod ↔ peer on one bridge in both families, and pod → gateway, are reachable', async () => {
    const report = await probeAndCheckLeaks(a);
    const peers = report.paths.filter((p) => p.kind === 'peer');
    expect(peers).toHaveLength(4);
    expect(new Set(peers.map((p) => p.family))).toEqual(new Set([4, 6]));
    for (const p of peers)
      expect(p, `${p.from} → ${p.to}`).toMatchObject({ verdict: 'reachable', measured: true, answeredBy: p.from === 'pod' ? b : a });
    const gw = report.paths.filter((p) => p.kind === 'gateway');
    expect(gw.map((p) => p.family).sort()).toEqual([4, 6]);
    for (const p of gw) expect(p, p.to).toMatchObject({ verdict: 'reachable', measured: true });
  });

  it('a port that already has a listener in the pod is connected to as it is and keeps running', async () => {
    const listener = execFile('nsenter', [
      `--net=${netnsOf.get(a)!}`,
      process.execPath,
      '-e',
      "require('net').createServer((s) => s.end('mine\\n')).listen(8080)",
    ]);
    try {
      // wait for the listener to be up
      for (let i = 0; i < 50 && !sh('nsenter', [`--net=${netnsOf.get(a)!}`, 'ss', '-Htln']).includes(':8080'); i++)
        await new Promise((r) => setTimeout(r, 100));
      const report = await engine.probe(a);
      for (const p of report.paths.filter((x) => x.kind === 'hostPort'))
        expect(p, p.to).toMatchObject({ verdict: 'reachable', listener: 'existing', answeredBy: a });
      expect(listener.exitCode).toBeNull();
    } finally {
      listener.kill('SIGKILL');
    }
  });

  it('a pod whose pause was killed gets no reachable verdict', async () => {
    const st = await engine.status(b);
    process.kill(st.pause.pid!, 'SIGKILL');
    for (let i = 0; i < 50 && (await engine.status(b)).state === 'SANDBOX_READY'; i++) await new Promise((r) => setTimeout(r, 100));
    const report = await engine.probe(b);
    expect(report.paths.length).toBeGreaterThan(0);
    for (const p of report.paths) expect(p.verdict, p.to).not.toBe('reachable');
    // and the first pod no longer sees it as a peer nor as a host-port rival
    const ra = await engine.probe(a);
    expect(ra.paths.filter((p) => p.kind === 'peer')).toEqual([]);
    expect((await engine.status(a)).hostPortConflicts).toEqual([]);
  });

  it('podscope probe: exit 0 when every path is reachable, JSON paths as documented', async () => {
    await engine.close();
    const flags = [
      '--state-dir',
      env.options.stateDir!,
      '--run-dir',
      env.options.runDir!,
      '--cni-conf-dir',
      env.options.cniConfDir!,
      '--cni-bin-dir',
      '/usr/lib/cni',
      '--cni-cache-dir',
      env.options.cniCacheDir!,
    ];
    const { stdout } = await run(process.execPath, ['bin/podscope.mjs', 'probe', a, '-o', 'json', ...flags], {
      cwd: join(__dirname, '../..'),
    });
    const doc = JSON.parse(stdout) as ProbeReport;
    expect(doc.paths.length).toBeGreaterThan(0);
    for (const p of doc.paths) expect(Object.keys(p)).toEqual(expect.arrayContaining(['kind', 'from', 'to', 'proto', 'verdict']));
    const inspect = JSON.parse(
      (await run(process.execPath, ['bin/podscope.mjs', 'inspectp', b, '-o', 'json', ...flags], { cwd: join(__dirname, '../..') })).stdout,
    ) as { hostPortConflicts: unknown };
    expect(inspect.hostPortConflicts).toEqual([]); // b's pause is dead by now: NOTREADY holds nothing
    const failed = await run(process.execPath, ['bin/podscope.mjs', 'probe', b, ...flags], { cwd: join(__dirname, '../..') }).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(failed.code).toBe(5);
    engine = await env.engine({ probeOnReady: false });
  });

  it('probe-on-ready: a new sandbox has a report right after it is ready', async () => {
    await engine.close();
    const e2 = await env.engine();
    const { id } = await e2.run({ config: pod('third') });
    let last = await e2.lastProbe(id);
    for (let i = 0; i < 100 && !last; i++) {
      await new Promise((r) => setTimeout(r, 100));
      last = await e2.lastProbe(id);
    }
    expect(last?.trigger).toBe('onReady');
    expect(last?.paths.filter((p) => p.kind === 'gateway').every((p) => p.verdict === 'reachable')).toBe(true);
  });
});

describe('the host-side agent of a probe placed on another node (its own netns)', () => {
  it('is never kept: closed with its probe, nothing stays in that node’s netns (only this process’s own agent is kept)', async () => {
    const name = env.lease!.name('keep');
    const path = `/run/netns/${name}`;
    sh('ip', ['netns', 'add', name]);
    try {
      const placed = new LinuxProbeNet(new NodeProcessRunner(), undefined, undefined, { netnsPath: path, addresses: [] });
      const first = await placed.open(undefined);
      const firstPid = first.pid!;
      expect(pidsInNetns(path)).toEqual([firstPid]);
      await first.close();
      expect(pidsInNetns(path)).toEqual([]);
      const again = await placed.open(undefined);
      expect(again.pid).not.toBe(firstPid);
      await again.close();
      expect(pidsInNetns(path)).toEqual([]);
    } finally {
      await endKeptProbeAgents();
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    }
  });
});
