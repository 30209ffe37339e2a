/**
 * The probe on a pod with two real networks (`--max-conf-num 2`): eth0 on Debian's bridge + host-local (v4 + v6) +
 * portmap, eth1 on macvlan (mode bridge) over a veth parent this test creates (this kernel has no dummy link), whose
 * other end sits in a netns of its own with no address, so nothing outside answers for the parent's address.
 * Every path names its network and interface; the macvlan child's path to its parent's own address and the host's
 * path into the macvlan network are `isolated` (sent, no answer, as macvlan's design says) and the probe still exits
 * 0; a real break on eth1 (a blackhole route to the peer's eth1 address in the pod) fails it. Needs root; the parent
 * link and its netns are removed in afterAll, whatever happened.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeRe } from '../../testkit/until';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { failingPaths, probeSucceeded, type ProbeReport } from '../../shared/domain/probe';
import { describeProbe } from '../../electron/cli/commands/probe';
import { engineFlagsFor } from '../../testkit/engine-flags';
import { leaseHost, type HostLease } from '../../testkit/allocator';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const quiet = (file: string, args: string[]) => {
  try {
    sh(file, args);
  } catch {
    /* absent */
  }
};
// the bridge network, the parent's address and the host port are the file's lease's (set in beforeAll)
let BRIDGE: string;
let PARENT_IP: string;
let hostPort: number;
let lease: HostLease | undefined;
const MACNET = 'psmn-mac';
const PARENT = 'pmnpar';
const WIRE = 'pmnsw';
const WIRE_NS = 'pmn-wire';

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-pmn', uid: `uid-pmn-${name}` }, hostname: name, ...extra };
}

function removeParent() {
  quiet('ip', ['link', 'del', PARENT]);
  quiet('ip', ['netns', 'del', WIRE_NS]);
}

/** `podscope probe` in a process of its own on the same state dir */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const flags = engineFlagsFor({ ...env.options, cniBinDirs: ['/usr/lib/cni'], maxConfNum: 2 });
  return new Promise((resolve) =>
    execFile(process.execPath, ['bin/podscope.mjs', 'probe', ...args, ...flags], { cwd: join(__dirname, '../..') }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

let env: RealEnv;
let engine: SandboxEngine;
let a: string;
let b: string;

beforeAll(async () => {
  lease = leaseHost('probe-multinet');
  PARENT_IP = lease.subnet4(1).replace(/0\/24$/, '1');
  hostPort = lease.port(0);
  removeParent();
  // the macvlan parent: one end of a veth pair with an address of the host's; the other end, up, in a netns of its
  // own without addresses, is the "wire" (nothing there answers ARP for the parent's address)
  sh('ip', ['netns', 'add', WIRE_NS]);
  sh('ip', ['link', 'add', PARENT, 'type', 'veth', 'peer', 'name', WIRE]);
  sh('ip', ['link', 'set', WIRE, 'netns', WIRE_NS]);
  sh('ip', ['-n', WIRE_NS, 'link', 'set', WIRE, 'up']);
  sh('ip', ['addr', 'add', `${PARENT_IP}/24`, 'dev', PARENT]);
  sh('ip', ['link', 'set', PARENT, 'up']);
  env = await createRealEnv({ tag: 'pmn', lease });
  BRIDGE = env.bridge;
  await mkdir(join(env.dir, 'ipam-mac'));
  const macvlan = {
    cniVersion: '1.0.0',
    name: MACNET,
    plugins: [
      {
        type: 'macvlan',
        master: PARENT,
        mode: 'bridge',
        ipam: {
          type: 'host-local',
          dataDir: join(env.dir, 'ipam-mac'),
          ranges: [
            [
              {
                subnet: lease.subnet4(1),
                rangeStart: PARENT_IP.replace(/1$/, '10'),
                rangeEnd: PARENT_IP.replace(/1$/, '50'),
                gateway: PARENT_IP,
              },
            ],
          ],
        },
      },
    ],
  };
  await writeFile(join(env.options.cniConfDir!, '20-psmn-mac.conflist'), JSON.stringify(macvlan, null, 2));
  engine = await env.engine({ probeOnReady: false, maxConfNum: 2 });
  ({ id: a } = await engine.run({
    config: pod('a', {
      port_mappings: [
        { container_port: 8080, host_port: hostPort },
        { container_port: 7070, host_port: 0 },
      ],
    }),
  }));
  ({ id: b } = await engine.run({ config: pod('b') }));
}, 120_000);

afterAll(async () => {
  try {
    await env?.teardown();
  } finally {
    removeParent();
    lease?.release();
  }
});

const eth1Of = (r: ProbeReport) => r.paths.filter((p) => p.interface === 'eth1');

describe('probe on a pod with a bridge (eth0) and a macvlan (eth1) network', () => {
  let report: ProbeReport;

  it('covers both interfaces, every path naming its network and interface', async () => {
    report = await engine.probe(a);
    console.log(
      `probe of a pod on 2 networks with 2 mappings and 1 peer: ${report.durationMs.toFixed(0)} ms, ${report.paths.length} paths`,
    );
    expect(report.errors).toEqual([]);
    expect(report.networks).toEqual([
      { network: BRIDGE, interface: 'eth0', plugins: ['bridge', 'portmap', 'bandwidth'], peers: { ready: 1, measured: 1 } },
      { network: MACNET, interface: 'eth1', plugins: ['macvlan'], linkKind: 'macvlan', parent: PARENT, peers: { ready: 1, measured: 1 } },
    ]);
    for (const p of report.paths)
      expect(p, `${p.kind} ${p.from} → ${p.to}`).toMatchObject({
        network: expect.any(String),
        interface: expect.stringMatching(/^eth[01]$/),
      });
    const eth0 = report.paths.filter((p) => p.interface === 'eth0');
    expect(eth0.every((p) => p.network === BRIDGE)).toBe(true);
    for (const p of eth0) expect(p, `${p.kind} ${p.from} → ${p.to}`).toMatchObject({ verdict: 'reachable', measured: true });
    expect(eth0.map((p) => p.kind).sort()).toEqual(
      // b declares no port; a declares 8080 and 7070: b connects to both in both families (peerPort)
      [
        ...Array(3).fill('hostPort'),
        ...Array(2).fill('podPort'),
        'gateway',
        'gateway',
        ...Array(4).fill('peer'),
        ...Array(4).fill('peerPort'),
      ].sort(),
    );
    // macvlan has no portmap in its chain: no host-port path crosses eth1
    expect(eth1Of(report).filter((p) => p.kind === 'hostPort')).toEqual([]);
  });

  it("eth1's peers (macvlan children of one parent, mode bridge) are reachable both ways", () => {
    const peers = eth1Of(report).filter((p) => p.kind === 'peer');
    expect(peers.map((p) => [p.from, p.verdict, p.answeredBy])).toEqual([
      ['pod', 'reachable', b],
      ['peer b', 'reachable', a],
    ]);
    expect(
      peers.every((p) => p.network === MACNET && new RegExp(String.raw`^${escapeRe(PARENT_IP.slice(0, -1))}\d+:\d+$`).test(p.to)),
    ).toBe(true);
  });

  it("the macvlan child's path to its parent's own address is isolated, with macvlan's rule as why; host → pod on eth1 too", () => {
    const gw = eth1Of(report).find((p) => p.kind === 'gateway')!;
    expect(gw).toMatchObject({
      verdict: 'isolated',
      measured: true,
      to: expect.stringMatching(new RegExp(String.raw`^${escapeRe(PARENT_IP)}:\d+$`)),
    });
    expect(gw.why).toMatch(
      new RegExp(
        String.raw`^macvlan: a macvlan child cannot reach its parent link's own addresses \(${escapeRe(PARENT_IP)} is on pmnpar\)`,
      ),
    );
    const podPort = eth1Of(report).find((p) => p.kind === 'podPort')!;
    expect(podPort).toMatchObject({
      verdict: 'isolated',
      measured: true,
      to: expect.stringMatching(new RegExp(String.raw`^${escapeRe(PARENT_IP.slice(0, -1))}\d+:7070$`)),
    });
    expect(podPort.why).toMatch(/^macvlan: the host has no macvlan of its own on pmnpar/);
    expect(probeSucceeded(report)).toBe(true);
    expect(failingPaths(report)).toEqual([]);
  });

  it('podscope probe -o json: exit 0 with isolated paths, every path with network and interface; the text groups by network', async () => {
    await engine.close();
    try {
      const json = await cli([a, '-o', 'json']);
      expect(json.code, json.stderr).toBe(0);
      const doc = JSON.parse(json.stdout) as ProbeReport;
      expect(new Set(doc.paths.map((p) => `${p.network}/${p.interface}`))).toEqual(new Set([`${BRIDGE}/eth0`, `${MACNET}/eth1`]));
      expect(
        doc.paths
          .filter((p) => p.verdict === 'isolated')
          .map((p) => p.kind)
          .sort(),
      ).toEqual(['gateway', 'podPort']);
      // the text of the same report (the CLI prints it without -o json; one CLI start is enough here)
      const text = { stdout: describeProbe(doc) };
      expect(text.stdout).toContain(`  network ${MACNET} (eth1) [macvlan, parent ${PARENT}]`);
      expect(text.stdout).toMatch(new RegExp(String.raw` {4}isolated +gateway +pod → ${escapeRe(PARENT_IP)}:\d+\/tcp`));
      expect(text.stdout).toContain("why: macvlan: a macvlan child cannot reach its parent link's own addresses");
    } finally {
      engine = await env.engine({ probeOnReady: false, maxConfNum: 2 });
    }
  });

  it('a real break on eth1 (a blackhole route to the peer in the pod) still fails the probe, naming eth1', async () => {
    const peerIp = /^([\d.]+):/.exec(eth1Of(report).find((p) => p.kind === 'peer' && p.from === 'pod')!.to)![1]!;
    const netns = (await engine.status(a)).netnsPath!;
    sh('nsenter', [`--net=${netns}`, 'ip', 'route', 'add', 'blackhole', `${peerIp}/32`]);
    try {
      const broken = await engine.probe(a);
      expect(probeSucceeded(broken)).toBe(false);
      // the pod's own connect fails at once; the peer's SYN arrives but the answer to it is black-holed
      expect(failingPaths(broken).map((p) => [p.kind, p.from, p.network, p.interface, p.verdict])).toEqual([
        ['peer', 'pod', MACNET, 'eth1', 'unreachable'],
        ['peer', 'peer b', MACNET, 'eth1', 'timeout'],
        // b's connects to the ports a declares (8080, 7070) are answered into the same black hole
        ['peerPort', 'peer b', MACNET, 'eth1', 'timeout'],
        ['peerPort', 'peer b', MACNET, 'eth1', 'timeout'],
      ]);
      // the isolated paths stay isolated beside it
      expect(
        eth1Of(broken)
          .filter((p) => p.verdict === 'isolated')
          .map((p) => p.kind)
          .sort(),
      ).toEqual(['gateway', 'podPort']);
    } finally {
      sh('nsenter', [`--net=${netns}`, 'ip', 'route', 'del', 'blackhole', `${peerIp}/32`]);
    }
  });
});
