/**
 * The CNI lab's probe step and its start-up GC of runs a crash interrupted, with Debian's real plugins in real
 * namespaces (root only). Everything is this file's: bridge, subnet and host ports from the test kit's allocator (a lease), dirs under
 * /tmp/psl-*; the leak checks and the sweep in afterAll look only at those.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import type { LabCapabilities } from '../../shared/domain/lab';
import type { ProbePath } from '../../shared/domain/probe';
import { labDirs } from './helpers/lab-dirs';
import { leaseHost } from '../../testkit/allocator';
import { findLeftovers, formatLeftovers, sweepLeftovers } from '../../testkit/leak-check';

// every host resource of this file is a lease of the test kit's allocator: files run in parallel
const lease = leaseHost('lab-gc-probe');
afterAll(() => lease.release());
const BRIDGE = lease.name('-lab');
const NETWORK = BRIDGE;
const SUBNET = lease.subnet4(2);
const GATEWAY = SUBNET.replace(/0\/24$/, '1');
const HOST_PORT = lease.port(0);
const ROOT = join(__dirname, '../..');
const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge') && existsSync('/usr/lib/cni/portmap');
const execFileP = promisify(execFile);

/** bridge + host-local, and portmap unless `portmap: false` (a host port then reaches nothing) */
function conflist(dir: string, opts: { portmap?: boolean } = {}): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          ipam: { type: 'host-local', dataDir: join(dir, 'ipam'), ranges: [[{ subnet: SUBNET }]] },
        },
        // snat: the host's own 127.0.0.1 → pod path needs portmap's localhost masquerade (route_localnet)
        ...(opts.portmap === false ? [] : [{ type: 'portmap', capabilities: { portMappings: true }, snat: true }]),
      ],
    },
    null,
    2,
  );
}

describe.skipIf(!canRun)('CNI lab: the probe step and start-up GC of interrupted runs (real plugins)', () => {
  let dir = '';
  const dirs = labDirs({ bridge: BRIDGE, subnet: SUBNET, network: NETWORK });
  const { scope, options, dropBridge } = dirs;

  beforeAll(async () => {
    await dirs.create('/tmp/psl-lab-');
    dir = dirs.dir;
  });

  afterEach(() => {
    if (dir) sweepLeftovers(scope());
    dropBridge();
  });

  afterAll(() => dirs.destroy());

  it('--probe measures host → netns address and host → host port (loopback and gateway) as reachable before DEL, records it with its time, and DEL still leaves nothing (CLI -o json, exit 0)', async () => {
    const file = join(dir, 'probe.conflist');
    await writeFile(file, conflist(dir));
    const o = options();
    const flags = ['--state-dir', o.stateDir!, '--run-dir', o.runDir!, '--netns-dir', o.netnsDir!, '--cni-conf-dir', o.cniConfDir!];
    flags.push('--cni-bin-dir', '/usr/lib/cni', '--cni-cache-dir', o.cniCacheDir!);
    let code = 0;
    let stdout = '';
    try {
      ({ stdout } = await execFileP(
        process.execPath,
        [
          'bin/podscope.mjs',
          'lab',
          'run',
          file,
          '--probe',
          '--skip-check',
          '--port-mapping',
          `${HOST_PORT}:8080/tcp`,
          '-o',
          'json',
          ...flags,
        ],
        { cwd: ROOT },
      ));
    } catch (e) {
      ({ code, stdout } = e as { code: number; stdout: string });
    }
    const out = JSON.parse(stdout) as {
      id: string;
      probe?: { measuredAt: string; measuredBy: string; durationMs: number; ok: boolean; paths: ProbePath[]; errors: string[] };
      plugins: Array<{ verb: string; type: string }>;
      result: { ips: Array<{ address: string }> };
      leftAfterDel: unknown[];
    };
    const podIp = out.result.ips[0]!.address.split('/')[0]!;
    const probe = out.probe!;
    expect(probe, 'the JSON carries the probe').toBeDefined();
    expect(Date.parse(probe.measuredAt)).not.toBeNaN();
    expect(probe.measuredBy).toBe('TCP connect');
    const verdicts = Object.fromEntries(probe.paths.map((p) => [`${p.kind} ${p.to}`, p.verdict]));
    expect(verdicts).toEqual({
      [`podPort ${podIp}:8080`]: 'reachable',
      [`hostPort 127.0.0.1:${HOST_PORT}`]: 'reachable',
      [`hostPort ${GATEWAY}:${HOST_PORT}`]: 'reachable',
    });
    expect(probe.paths.every((p) => p.measured && p.listener === 'responder' && typeof p.rttMs === 'number')).toBe(true);
    expect(probe.ok).toBe(true);
    // the probe ran between ADD and DEL: DEL followed and took everything back
    expect(out.plugins.map((p) => `${p.verb} ${p.type}`)).toEqual(['ADD bridge', 'ADD portmap', 'DEL portmap', 'DEL bridge']);
    expect(out.leftAfterDel).toEqual([]);
    expect(code).toBe(0);
    expect(formatLeftovers(findLeftovers(scope()))).toBe('');
  });

  it('a probe that fails (the mapped host port answers nothing: portmap left out) is recorded as failed, the run fails, and DEL still runs and leaves nothing', async () => {
    const engine = await createEngine(options(), { log: () => undefined });
    try {
      const text = conflist(dir, { portmap: false });
      const run = await engine.lab!.run({
        text,
        capabilities: { portMappings: [{ hostPort: HOST_PORT + 1, containerPort: 8080, protocol: 'tcp' }] },
        probe: true,
        skipCheck: true,
      });
      const byKind = (k: string) => run.probe!.paths.filter((p) => p.kind === k);
      expect(byKind('podPort').map((p) => p.verdict)).toEqual(['reachable']);
      // no DNAT for the host port: nothing listens on it on the host, so the connect is refused
      expect(byKind('hostPort').length).toBeGreaterThan(0);
      expect(byKind('hostPort').every((p) => p.measured && p.verdict === 'refused')).toBe(true);
      expect(run.probe!.ok).toBe(false);
      expect(run.success).toBe(false);
      expect(run.plugins.map((p) => `${p.phase} ${p.type}`)).toEqual(['ADD bridge', 'DEL bridge']);
      expect(run.delOk).toBe(true);
      expect(run.leftAfterDel).toEqual([]);
      expect(formatLeftovers(findLeftovers(scope()))).toBe('');
    } finally {
      await engine.close();
    }
  });

  it('start-up GC: an engine killed between ADD and DEL leaves the netns, veth, rules and reservation; the next engine on the same state dir runs DEL with the recorded conflist, removes the netns, keeps the run as recovered and logs it', async () => {
    const caps: LabCapabilities = { portMappings: [{ hostPort: HOST_PORT + 2, containerPort: 80, protocol: 'tcp' }] };
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'tests/real/helpers/lab-crash-driver.ts',
        JSON.stringify({ options: options(), text: conflist(dir), capabilities: caps }),
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const containerId = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^in-del (\S+)$/m.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (c) => reject(new Error(`driver exited (${c}) before DEL: ${out}\n${err}`)));
    });
    process.kill(child.pid!, 'SIGKILL');
    await exited;

    // what the crash left: the run's netns, its veth on our bridge, portmap's rules, the host-local reservation
    const left = findLeftovers(scope());
    expect(left.some((l) => l.kind === 'netns' && l.what.includes(containerId))).toBe(true);
    expect(left.some((l) => l.kind === 'interface')).toBe(true);
    expect(left.some((l) => l.kind === 'ipam')).toBe(true);
    expect(left.some((l) => l.kind === 'iptables')).toBe(true);
    const runId = containerId.replace(/^podscope-lab-/, '');
    expect(await readdir(join(dir, 'state', 'lab', 'inflight'))).toEqual([`${runId}.json`]);

    const logs: string[] = [];
    const engine = await createEngine(options(), { log: (l) => logs.push(l) });
    try {
      expect(formatLeftovers(findLeftovers(scope()))).toBe('');
      expect(await readdir(join(dir, 'state', 'lab', 'inflight'))).toEqual([]);
      const gc = (await engine.info()).startupGc ?? [];
      const item = gc.find((g) => g.path === join(dir, 'netns', containerId));
      expect(item?.error).toBeUndefined();
      expect(item?.action).toMatch(
        /interrupted: CNI DEL with the recorded conflist \(2 plugin execs\): ok; netns .* unmounted and deleted/,
      );
      expect(logs.some((l) => l.startsWith('start-up GC: netns') && l.includes(containerId))).toBe(true);
      const run = await engine.lab!.get(runId);
      expect(run.recovered?.actions.length).toBe(2);
      expect(run.plugins.map((p) => `${p.verb} ${p.type}`)).toEqual(['DEL portmap', 'DEL bridge']);
      // portmap's DEL got the recorded port mapping back, so it removed that mapping's DNAT
      expect(JSON.parse(run.plugins[0]!.stdin).runtimeConfig.portMappings[0].hostPort).toBe(HOST_PORT + 2);
      expect(run.success).toBe(false);
      expect((await engine.lab!.list()).find((r) => r.id === runId)).toBeDefined();
    } finally {
      await engine.close();
    }
  });
});
