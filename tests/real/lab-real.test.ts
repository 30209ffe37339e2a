/**
 * The CNI lab against Debian's real plugins in real throwaway namespaces (root only). Everything is named after this
 * file: bridge, subnet and host ports from the test kit's allocator (a lease), dirs under /tmp/podscope-l1-*. Between runs and in
 * afterAll the bridge is deleted and a scoped leak sweep removes whatever a failing test left.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { escapeRe } from '../../testkit/until';
import { createEngine } from '../../electron/engine/index';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { NodeProcessRunner, type ExecRequest, type ExecResult, type ProcessRunner } from '../../electron/engine/os/exec';
import type { LabApi, LabRun } from '../../shared/domain/lab';
import { labDirs } from './helpers/lab-dirs';
import { leaseHost } from '../../testkit/allocator';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { findLeftovers, formatLeftovers } from '../../testkit/leak-check';

// every host resource of this file is a lease of the test kit's allocator: files run in parallel
const lease = leaseHost('lab-real');
afterAll(() => lease.release());
const BRIDGE = lease.name('-lab');
const NETWORK = BRIDGE;
const SUBNET = lease.subnet4(5);
const V4 = subnetTextPrefix(SUBNET);
const HOST_PORT = lease.port(0);
const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge');
const execFileP = promisify(execFile);

/** counts every process the engine starts, to prove a refused conflist executes nothing */
class CountingRunner implements ProcessRunner {
  readonly files: string[] = [];
  private readonly inner = new NodeProcessRunner();
  run(req: ExecRequest): Promise<ExecResult> {
    this.files.push(req.file);
    return this.inner.run(req);
  }
}

function conflist(
  dir: string,
  bridgeExtra: Record<string, unknown> = {},
  middle?: Record<string, unknown>,
  listExtra: Record<string, unknown> = {},
): string {
  const plugins: Array<Record<string, unknown>> = [
    {
      type: 'bridge',
      bridge: BRIDGE,
      isGateway: true,
      ipMasq: false,
      hairpinMode: true,
      ...bridgeExtra,
      ipam: { type: 'host-local', dataDir: join(dir, 'ipam'), ranges: [[{ subnet: SUBNET }]] },
    },
    ...(middle ? [middle] : []),
    { type: 'portmap', capabilities: { portMappings: true }, snat: false },
    { type: 'bandwidth', capabilities: { bandwidth: true } },
  ];
  return JSON.stringify({ cniVersion: '1.0.0', name: NETWORK, ...listExtra, plugins }, null, 2);
}

describe.skipIf(!canRun)('CNI lab with real plugins', () => {
  let dir = '';
  let engine: SandboxEngine;
  let lab: LabApi;
  const runner = new CountingRunner();
  const dirs = labDirs({ bridge: BRIDGE, subnet: SUBNET, network: NETWORK });
  const { scope, options, dropBridge } = dirs;

  beforeAll(async () => {
    await dirs.create('/tmp/podscope-l1-lab-');
    dir = dirs.dir;
    engine = await createEngine(options(), { runner });
    lab = engine.lab!;
  });

  afterEach(() => {
    dropBridge();
  });

  afterAll(async () => {
    await engine?.close();
    await dirs.destroy();
  });

  async function cliRun(text: string, port: number) {
    const file = join(dir, `run-${port}.conflist`);
    await writeFile(file, text);
    const o = options();
    const flags = [
      '--state-dir',
      o.stateDir,
      '--run-dir',
      o.runDir,
      '--netns-dir',
      o.netnsDir,
      '--cni-conf-dir',
      o.cniConfDir,
      '--cni-bin-dir',
      '/usr/lib/cni',
      '--cni-cache-dir',
      o.cniCacheDir,
    ];
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
          '--port-mapping',
          `${port}:80/tcp`,
          '--bandwidth',
          '1000000,2000000',
          '-o',
          'json',
          ...flags,
        ],
        { cwd: join(__dirname, '../..') },
      ));
    } catch (e) {
      ({ code, stdout } = e as { code: number; stdout: string });
    }
    type Out = {
      plugins: Array<{
        type: string;
        verb: string;
        exitCode: number;
        durationMs: number;
        stdin: string;
        stdout: string;
        stderr: string;
        pastKnownDefectOf?: number;
      }>;
      result: { ips: Array<{ address: string }> };
      success: boolean;
      checkOk: boolean | null;
      checkKnownDefects: Array<{ type: string; index: number; version: string; reference: string }>;
      kernelCreated: Array<{ kind: string; what: string }>;
      leftAfterDel: unknown[];
      durationMs: number;
    };
    return { code, out: JSON.parse(stdout) as Out };
  }

  it('runs bridge+host-local+portmap+bandwidth: every plugin stdin and result, the rules and qdiscs created, nothing left after DEL (CLI, -o json, exit 0)', async () => {
    const { code, out } = await cliRun(conflist(dir, {}, undefined, { disableCheck: true }), HOST_PORT);
    expect(out.plugins.map((p) => `${p.verb} ${p.type}`)).toEqual([
      'ADD bridge',
      'ADD portmap',
      'ADD bandwidth',
      'DEL bandwidth',
      'DEL portmap',
      'DEL bridge',
    ]);
    expect(out.plugins.every((p) => p.exitCode === 0 && p.durationMs > 0)).toBe(true);
    const add = (type: string) => out.plugins.find((p) => p.verb === 'ADD' && p.type === type)!;
    expect(JSON.parse(add('portmap').stdin).runtimeConfig.portMappings).toEqual([
      { hostPort: HOST_PORT, containerPort: 80, protocol: 'tcp' },
    ]);
    expect(JSON.parse(add('bandwidth').stdin).runtimeConfig.bandwidth).toMatchObject({ ingressRate: 1000000, egressRate: 2000000 });
    expect(JSON.parse(add('bridge').stdin).runtimeConfig).toBeUndefined(); // it declares no capability
    for (const type of ['bridge', 'portmap', 'bandwidth'])
      expect(JSON.parse(add(type).stdout).ips[0].address).toMatch(new RegExp(String.raw`^${escapeRe(V4)}\d+\/24$`));
    expect(out.result.ips[0]!.address).toMatch(new RegExp(String.raw`^${escapeRe(V4)}`));
    const created = out.kernelCreated.map((i) => `${i.kind} ${i.what}`);
    expect(
      created.some((l) => l.startsWith('iptables nat -A CNI-DN-') && l.includes(`--dport ${HOST_PORT} -j DNAT --to-destination ${V4}`)),
    ).toBe(true);
    expect(created.filter((l) => /^qdisc dev \S+ tbf /.test(l))).toHaveLength(2); // the veth (ingress) and the ifb (egress)
    expect(created.some((l) => l.startsWith(`netns-address eth0 ${V4}`))).toBe(true);
    expect(out.leftAfterDel).toEqual([]);
    expect(code).toBe(0);
    console.log(`lab run (CLI, bridge+portmap+bandwidth, ADD+DEL): ${out.durationMs} ms`);
    // and an independent look at the host agrees
    expect(formatLeftovers(findLeftovers(scope()))).toBe('');
    expect(readdirSync(join(dir, 'netns'))).toEqual([]);
  });

  it('CHECK runs for 1.0.0 lists: Debian portmap 1.1.1 fails it on an IPv4-only pod with a known defect (containernetworking/plugins#819): amber, the rest of the chain still checked, exit 0, DEL cleans up', async () => {
    const { code, out } = await cliRun(conflist(dir), HOST_PORT + 3);
    // libcni's CHECK would stop at portmap; past a known defect of the installed release the lab checks the rest
    expect(
      out.plugins.map((p) => `${p.verb} ${p.type} ${p.exitCode}${p.pastKnownDefectOf !== undefined ? ` past#${p.pastKnownDefectOf}` : ''}`),
    ).toEqual([
      'ADD bridge 0',
      'ADD portmap 0',
      'ADD bandwidth 0',
      'CHECK bridge 0',
      'CHECK portmap 1',
      'CHECK bandwidth 0 past#1',
      'DEL bandwidth 0',
      'DEL portmap 0',
      'DEL bridge 0',
    ]);
    expect(out.plugins.find((p) => p.verb === 'CHECK' && p.type === 'portmap')!.stdout).toContain('could not check ipv6 dnat');
    expect(JSON.parse(out.plugins.find((p) => p.verb === 'CHECK' && p.type === 'bridge')!.stdin).prevResult.ips[0].address).toMatch(
      new RegExp(String.raw`^${escapeRe(V4)}`),
    );
    expect(out.checkOk).toBe(true);
    expect(out.checkKnownDefects).toEqual([
      expect.objectContaining({ type: 'portmap', index: 1, version: '1.1.1', reference: expect.stringMatching(/plugins\/issues\/819$/) }),
    ]);
    expect(out.success).toBe(true);
    expect(out.leftAfterDel).toEqual([]);
    expect(code).toBe(0);
  });

  it('a plugin that fails ADD: the trace shows the failure and the DEL of the whole list in reverse (as libcni), and nothing is left', async () => {
    const run: LabRun = await lab.run({
      text: conflist(dir, {}, { type: 'psl1-no-such-plugin' }),
      capabilities: { portMappings: [{ hostPort: HOST_PORT + 1, containerPort: 80, protocol: 'tcp' }] },
    });
    expect(run.plugins.map((p) => `${p.verb} ${p.type} ${p.ok ? 'ok' : 'failed'}`)).toEqual([
      'ADD bridge ok',
      'ADD psl1-no-such-plugin failed',
      'DEL bandwidth ok',
      'DEL portmap ok',
      'DEL psl1-no-such-plugin failed',
      'DEL bridge ok',
    ]);
    const failed = run.plugins[1]!;
    expect(failed.binary).toBeUndefined();
    expect(failed.error?.message).toContain('failed to find plugin "psl1-no-such-plugin"');
    expect(run.addOk).toBe(false);
    expect(run.checkOk).toBeUndefined();
    expect(run.delOk).toBe(true);
    expect(run.success).toBe(false);
    // bridge had made its veth and reserved an address before the failure
    expect(run.kernelCreated.some((i) => i.kind === 'link' && new RegExp(` veth .*master ${escapeRe(BRIDGE)}`).test(i.what))).toBe(true);
    expect(run.kernelCreated.some((i) => i.kind === 'ipam' && i.what.includes(run.containerId))).toBe(true);
    expect(run.leftAfterDel).toEqual([]);
    expect(formatLeftovers(findLeftovers({ ...scope(), ids: [run.containerId] }))).toBe('');
  });

  it('two runs differing in the bridge mtu: the diff names exactly bridge.mtu in stdin and only MTU lines in the kernel state', async () => {
    const a = await lab.run({
      text: conflist(dir, { mtu: 1400 }),
      capabilities: { portMappings: [{ hostPort: HOST_PORT + 2, containerPort: 80, protocol: 'tcp' }] },
    });
    dropBridge(); // both runs start from the same host: the bridge plugin creates its bridge with the conf's MTU
    const b = await lab.run({
      text: conflist(dir, { mtu: 1450 }),
      capabilities: { portMappings: [{ hostPort: HOST_PORT + 2, containerPort: 80, protocol: 'tcp' }] },
    });
    for (const r of [a, b]) expect([r.addOk, r.delOk, r.leftAfterDel], JSON.stringify(r.leftAfterDel)).toEqual([true, true, []]);
    const d = await lab.diff(a.id, b.id);
    const changed = d.plugins.filter((p) => p.stdin.length > 0);
    expect(changed.map((p) => `${p.phase} ${p.type}`)).toEqual(['ADD bridge', 'CHECK bridge', 'DEL bridge']);
    for (const p of changed) expect(p.stdin).toEqual([{ path: 'mtu', a: 1400, b: 1450, change: 'changed' }]);
    expect(d.plugins.filter((p) => p.type !== 'bridge').every((p) => p.same)).toBe(true);
    expect(d.kernel!.onlyA.length).toBeGreaterThan(0);
    expect(d.kernel!.onlyA.map((i) => i.what).every((w) => w.includes('mtu 1400'))).toBe(true);
    expect(d.kernel!.onlyB.map((i) => i.what).every((w) => w.includes('mtu 1450'))).toBe(true);
    expect(d.kernel!.onlyB.some((i) => i.kind === 'netns-link' && i.what.startsWith('eth0 veth mtu 1450'))).toBe(true);
    expect((await lab.list()).map((r) => r.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    // the same from the CLI, on the kept records
    const o = options();
    const flags = [
      '--state-dir',
      o.stateDir,
      '--run-dir',
      o.runDir,
      '--netns-dir',
      o.netnsDir,
      '--cni-conf-dir',
      o.cniConfDir,
      '--cni-bin-dir',
      '/usr/lib/cni',
      '--cni-cache-dir',
      o.cniCacheDir,
    ];
    const cli = (...args: string[]) =>
      execFileP(process.execPath, ['bin/podscope.mjs', 'lab', ...args, ...flags], { cwd: join(__dirname, '../..') });
    const text = (await cli('diff', a.id, b.id)).stdout;
    expect(text).toContain('ADD #0 bridge: differs');
    expect(text).toContain('stdin  mtu: 1400 → 1450');
    expect(text).toContain('ADD #1 portmap: same');
    expect((await cli('ls')).stdout).toContain(b.id);
  });

  it('two runs of the same conflist, the second finding the bridge the first left: no plugin differs, and the bridge shows as existing before the second run, not as a kernel difference', async () => {
    const req = {
      text: conflist(dir, {}, undefined, { disableCheck: true }),
      capabilities: { portMappings: [{ hostPort: HOST_PORT + 4, containerPort: 80, protocol: 'tcp' as const }] },
    };
    const a = await lab.run(req);
    const b = await lab.run(req); // the bridge plugin kept psl1-lab after a's DEL
    for (const r of [a, b]) expect([r.addOk, r.delOk, r.leftAfterDel], JSON.stringify(r.leftAfterDel)).toEqual([true, true, []]);
    expect(a.kernelCreated.some((i) => i.kind === 'link' && i.what.startsWith(`${BRIDGE} bridge`))).toBe(true);
    expect(b.existedBefore?.some((i) => i.kind === 'link' && i.what.startsWith(`${BRIDGE} bridge`))).toBe(true);
    const d = await lab.diff(a.id, b.id);
    expect(d.plugins.filter((p) => !p.same).map((p) => ({ p: `${p.phase} ${p.type}`, stdin: p.stdin, result: p.result }))).toEqual([]);
    expect(d.kernel?.onlyA).toEqual([]);
    expect(d.kernel?.onlyB).toEqual([]);
    expect(d.kernel?.existedBefore?.find((i) => i.kind === 'link')).toMatchObject({
      createdBy: 'a',
      what: expect.stringMatching(new RegExp(`^${escapeRe(BRIDGE)} bridge `)),
    });
    expect(d.kernel?.existedBefore?.every((i) => i.why.startsWith(`existed before run ${b.id}`))).toBe(true);
  });

  it('refuses an invalid conflist with the JSON position and executes nothing', async () => {
    const text = '{\n  "cniVersion": "1.0.0",\n  "name": "psl1-lab",\n  "plugins": [ { "type": "bridge", } ]\n}\n';
    const before = runner.files.length;
    const runsBefore = (await lab.list()).length;
    const err = await lab.run({ text }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string; details: { errors: Array<{ line: number; column: number }> } },
    );
    expect(err?.code).toBe('InvalidArgument');
    expect(err?.details.errors[0]).toMatchObject({ line: 4, column: 36 });
    expect(err?.message).toContain('line 4, column 36');
    expect(runner.files.slice(before)).toEqual([]);
    expect((await lab.list()).length).toBe(runsBefore);
    // a schema error points at its value too
    const v = await lab.validate(conflist(dir, { mtu: 'big' }));
    expect(v.ok).toBe(false);
    expect(v.errors[0]).toMatchObject({ path: 'plugins.0.mtu', line: 11 });
  });
});
