/**
 * The measurements on the real host: throughput through a pod's veth against the tbf Debian's bandwidth plugin
 * installs, the topology read from the kernel, CNI CHECK/STATUS with the real plugins. Needs root. Everything is on a
 * bridge and subnet leased from the test kit's allocator (a second lease for the 1.1.0 list) and removed in afterAll.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import { hasCode } from '../../shared/domain/errors';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { engineFlagsFor } from '../../testkit/engine-flags';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' });
const RATE = 10_000_000;

/** pids of processes whose command line mentions this netns or the throughput script (ours only: our netns path) */
function processesUsing(netnsPath: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes(netnsPath) || (cmd.includes("require('net')") && cmd.includes(subnetTextPrefix(env.subnet4)))) out.push(Number(p));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** TCP sockets inside the netns other than listeners the test itself did not open (there are none) */
// -p: the process holding each socket, if any (users:(("node",pid=…,fd=…)))
const socketsIn = (netnsPath: string) => sh('nsenter', [`--net=${netnsPath}`, 'ss', '-Htanp']).trim();

let env: RealEnv;
let engine: SandboxEngine;

beforeAll(async () => {
  env = await createRealEnv({ tag: 't2m' });
  // The testkit's route has no gw; bridge installs it via the gateway, and bridge's CHECK then reports the route it
  // expects (gw <nil>) as missing on a healthy pod. An explicit gw makes the result say what the plugin installs.
  const file = join(env.dir, 'net.d', '10-podscope-test.conflist');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { plugins: Array<{ ipam?: { routes?: unknown[] } }> };
  list.plugins[0]!.ipam!.routes = [{ dst: env.lease!.range4, gw: env.gateway4 }];
  writeFileSync(file, JSON.stringify(list));
  engine = await env.engine();
});

afterAll(async () => {
  await env?.teardown();
});

describe('a pod with kubernetes.io/ingress-bandwidth and egress-bandwidth 10M', () => {
  let id: string;
  let netnsPath: string;

  it('runs', async () => {
    ({ id } = await engine.run({
      config: {
        metadata: { name: 'bw', namespace: 'podscope-t2', uid: 'uid-bw' },
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
      },
    }));
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_READY');
    netnsPath = st.netnsPath!;
  });

  it('measures about 10 Mbit/s each way once past the burst, reports the burst in bytes from the kernel and says short flows are not shaped', async () => {
    const progress: SandboxEvent[] = [];
    const off = engine.subscribe((e) => e.type === 'sandbox.measureProgress' && progress.push(e));
    const report = await engine.throughput(id);
    off();
    console.log(
      `throughput: ingress ${report.ingress.measuredBps} bit/s, egress ${report.egress.measuredBps} bit/s, burst ${report.ingress.burstBytes}/${report.egress.burstBytes} B`,
    );
    for (const d of [report.ingress, report.egress]) {
      expect(d.requestedBps).toBe(RATE);
      expect(d.appliedBps).toBe(RATE);
      // the burst as tc reads it back from the qdisc, not containerd's MaxUint32 bits
      const dev = d.device!;
      const tbf = (JSON.parse(sh('tc', ['-j', 'qdisc', 'show', 'dev', dev])) as Array<{ kind: string; options?: { burst?: number } }>).find(
        (q) => q.kind === 'tbf',
      );
      expect(d.burstBytes).toBe(tbf!.options!.burst);
      expect(d.burstBytes).toBeGreaterThan(RATE / 8);
      expect(d.unshapedBelowBytes).toBe(d.burstBytes);
      expect(d.pastBurst).toBe(true);
      expect(d.verdict).toBe('shaped');
      expect(d.measuredBps!).toBeGreaterThan(RATE * 0.8);
      expect(d.measuredBps!).toBeLessThan(RATE * 1.2);
      // the burst went through far faster than the limit
      expect(d.overallBps).toBeGreaterThan(RATE * 1.2);
    }
    expect(report.ingress.device).not.toBe(report.egress.device);
    expect(progress.length).toBeGreaterThan(10);
  }, 60_000);

  it('leaves no sender/receiver process and no socket held by a process in the netns behind', async () => {
    expect(processesUsing(netnsPath)).toEqual([]);
    // The run's background reachability probe waits for the port gate the meter held, so it starts as the meter ends
    // and its connects (pod → gateway, SYN-SENT for up to its 1.5 s connect timeout) are the engine's own, seen by
    // ss in CI. Its report marks its end; only then is every socket left in the netns the meter's.
    for (let t0 = Date.now(); (await engine.lastProbe(id)) === null && Date.now() - t0 < 10_000;) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // A socket the meter closed can still be finishing in the kernel, owned by no process (CLOSING or LAST-ACK with
    // its FIN queued behind the 10 Mbit tbf, seen in CI; a SYN-SENT seen once under load too). Those are the kernel's
    // to finish and are waited for, up to 10 s, then only reported; a socket some process holds fails at once.
    const owned = (l: string) => l.includes('users:(');
    let left = socketsIn(netnsPath);
    for (let t0 = Date.now(); left !== '' && !left.split('\n').some(owned) && Date.now() - t0 < 10_000;) {
      await new Promise((r) => setTimeout(r, 200));
      left = socketsIn(netnsPath);
    }
    if (left !== '') console.log(`sockets the kernel is still finishing in the pod netns:\n${left}`);
    expect(left.split('\n').filter(owned)).toEqual([]);
  }, 30_000);

  it('`podscope throughput ID -o json` gives {ingress, egress: {requestedBps, measuredBps, burstBytes}} and exit 0', async () => {
    // the CLI opens its own engine on the same state dir: release ours (and its lock) meanwhile
    await engine.close();
    const o = env.options;
    const flags = engineFlagsFor({ ...o, cniBinDirs: ['/usr/lib/cni'] });
    const cli = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['bin/podscope.mjs', 'throughput', id, '-o', 'json', '--duration', '4000', ...flags],
        { cwd: join(__dirname, '../..') },
        (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
      );
    });
    engine = await env.engine();
    expect(cli.code).toBe(0);
    const doc = JSON.parse(cli.stdout) as {
      id: string;
      throughput: Record<'ingress' | 'egress', { requestedBps: number; measuredBps: number; burstBytes: number }>;
    };
    expect(doc.id).toBe(id);
    for (const d of [doc.throughput.ingress, doc.throughput.egress]) {
      expect(d.requestedBps).toBe(RATE);
      expect(d.burstBytes).toBeGreaterThan(RATE / 8);
      expect(d.measuredBps).toBeGreaterThan(RATE * 0.8);
      expect(d.measuredBps).toBeLessThan(RATE * 1.2);
    }
    expect(processesUsing(netnsPath)).toEqual([]);
  }, 60_000);

  it('draws the pod from the kernel: netns eth0 → its veth peer → the env bridge, with addresses, MACs and MTU', async () => {
    const topo = await engine.topology(id);
    const st = await engine.status(id);
    expect(Date.parse(topo.readAt)).not.toBeNaN();
    const eth0 = topo.nodes.find((n) => n.id === `pod:${id}:eth0`)!;
    expect(eth0.addresses.map((a) => `${a.address}/${a.prefixLen}`)).toContain(`${st.ip}/24`);
    const inside = JSON.parse(sh('ip', ['-n', basename(netnsPath), '-j', 'link', 'show', 'eth0']))[0] as {
      mtu: number;
      address: string;
      link_index: number;
    };
    expect(eth0.mtu).toBe(inside.mtu);
    expect(eth0.mac).toBe(inside.address);
    const vethEdge = topo.edges.find((e) => e.from === eth0.id && e.kind === 'veth')!;
    const veth = topo.nodes.find((n) => n.id === vethEdge.to)!;
    expect(veth.ifindex).toBe(inside.link_index);
    expect(veth.master).toBe(env.bridge);
    expect(veth.hairpin).toBe(true);
    const bridge = topo.nodes.find((n) => n.kind === 'bridge')!;
    expect(bridge.name).toBe(env.bridge);
    expect(bridge.addresses.map((a) => a.address)).toContain(env.gateway4);
    expect(topo.edges).toContainEqual(expect.objectContaining({ from: veth.id, to: bridge.id, kind: 'bridge-port' }));
    expect(topo.nodes.some((n) => n.kind === 'ifb' && topo.edges.some((e) => e.from === veth.id && e.to === n.id))).toBe(true);
    const net = await engine.networkTopology(env.network);
    expect(net.sandboxes.map((s) => s.id)).toEqual([id]);
  });

  it('CHECK passes on the healthy pod, each plugin exec in the trace', async () => {
    const report = await engine.cniCheck(id);
    expect(report.ok).toBe(true);
    const mine = report.networks.find((n) => n.network === env.network)!;
    expect(mine.outcome).toBe('passed');
    expect(mine.entries.filter((e) => e.step === 'cni.plugin').map((e) => e.plugin!.type)).toEqual(['bridge', 'portmap', 'bandwidth']);
    // the loopback list is 0.3.1: CHECK does not exist there, and that is no failure
    expect(report.networks.find((n) => n.network === 'cni-loopback')?.outcome).toBe('notSupported');
    const st = await engine.status(id);
    const checks = st.trace.filter((t) => t.phase === 'check' && t.plugin?.verb === 'CHECK');
    expect(checks.length).toBe(3);
    expect(JSON.parse(checks[0]!.plugin!.stdin).prevResult.ips[0].address).toBe(`${st.ip}/24`);
  });

  it('CHECK fails, recorded in the trace, once the pod address is deleted inside the netns', async () => {
    const st = await engine.status(id);
    sh('ip', ['-n', basename(netnsPath), 'addr', 'del', `${st.ip}/24`, 'dev', 'eth0']);
    const report = await engine.cniCheck(id);
    expect(report.ok).toBe(false);
    const mine = report.networks.find((n) => n.network === env.network)!;
    expect(mine.outcome).toBe('failed');
    const failed = mine.entries.find((e) => e.step === 'cni.plugin' && !e.ok)!;
    expect(failed.plugin!.type).toBe('bridge');
    expect(failed.plugin!.exitCode).not.toBe(0);
    expect(failed.plugin!.stdout + failed.plugin!.stderr).toContain(subnetTextPrefix(env.subnet4));
    expect((await engine.status(id)).trace.some((t) => t.phase === 'check' && t.plugin?.verb === 'CHECK' && !t.ok)).toBe(true);
  });

  it('STATUS of the 1.0.0 list is reported as not supported by that version, not as a failure', async () => {
    const report = await engine.cniStatus();
    expect(report.ok).toBe(true);
    const mine = report.networks.find((n) => n.network === env.network)!;
    expect(mine.outcome).toBe('notSupported');
    expect(mine.message).toContain('1.0.0');
    expect(mine.entries).toEqual([]);
  });

  it('a stopped pod is never measured', async () => {
    await engine.stop(id);
    await expect(engine.throughput(id)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
    await expect(engine.topology(id)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
    await expect(engine.cniCheck(id)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
  });
});

describe('STATUS on a 1.1.0 conflist', () => {
  let env11: RealEnv;
  afterAll(async () => {
    await env11?.teardown();
  });

  it("runs STATUS (recorded), and Debian's plugins, which speak spec versions up to 1.0.0, are reported as not supporting it", async () => {
    env11 = await createRealEnv({ tag: 't2s', cniVersion: '1.1.0' });
    const e = await env11.engine();
    const report = await e.cniStatus();
    const mine = report.networks.find((n) => n.network === env11.network)!;
    const [status, version] = mine.entries;
    expect(status!.plugin).toMatchObject({ verb: 'STATUS', type: 'bridge', exitCode: 1 });
    expect(JSON.parse(status!.plugin!.stdin)).toMatchObject({ cniVersion: '1.1.0', name: env11.network });
    expect(version!.plugin).toMatchObject({ verb: 'VERSION', type: 'bridge', exitCode: 0 });
    const supported = (JSON.parse(version!.plugin!.stdout) as { supportedVersions: string[] }).supportedVersions;
    expect(supported).not.toContain('1.1.0');
    expect(mine.outcome).toBe('notSupported');
    expect(mine.message).toContain('has no STATUS');
    expect(report.ok).toBe(true);
  });
});
