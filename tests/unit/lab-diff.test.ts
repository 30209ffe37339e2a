/**
 * The lab diff's normaliser through LabService.diff, on kept run records and a live pod's recorded ADD: a run and a
 * pod's ADD of the same plugins differ in no plugin (both sides get their placeholders the same way), and a bridge one
 * run created and the next one found is listed as having existed before that run, not as a kernel difference.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { emptySnapshot } from '../../electron/engine/lab/kernel';
import { goPanicNoise } from '../../electron/engine/lab/diff';
import { derivedNames } from '../../electron/engine/lab/names';
import { LabService, type RecordedAdd } from '../../electron/engine/lab/service';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import type { LabKernelItem, LabPluginTrace, LabRun } from '../../shared/domain/lab';

const NETWORK = 'podnet';

interface Attached {
  containerId: string;
  netns: string;
  bridge: string;
  veth: string;
  ip: string;
  /** bridge, host veth, eth0, ifb */
  macs: [string, string, string, string];
}

function trace(index: number, type: string, stdin: object, stdout: object): LabPluginTrace {
  return {
    phase: 'ADD',
    verb: 'ADD',
    index,
    type,
    binary: `/usr/lib/cni/${type}`,
    stdin: JSON.stringify(stdin),
    stdout: JSON.stringify(stdout),
    stderr: '',
    exitCode: 0,
    durationMs: 5 + index,
    ok: true,
    startedAt: '2026-11-25T20:00:00.000Z',
  };
}

/** bridge + portmap + bandwidth ADD as the real plugins print it: the bridge result, passed on, bandwidth adding its ifb */
function addTraces(o: Attached): { plugins: LabPluginTrace[]; result: Record<string, unknown> } {
  const conf = { cniVersion: '1.0.0', name: NETWORK };
  const bridgeResult = {
    cniVersion: '1.0.0',
    interfaces: [
      { name: o.bridge, mac: o.macs[0] },
      { name: o.veth, mac: o.macs[1] },
      { name: 'eth0', mac: o.macs[2], sandbox: o.netns },
    ],
    ips: [{ interface: 2, address: `${o.ip}/24`, gateway: '10.99.0.1' }],
    routes: [{ dst: '0.0.0.0/0' }],
    dns: {},
  };
  const ifb = derivedNames(NETWORK, o.containerId).ifb[0]!;
  const final = { ...bridgeResult, interfaces: [...bridgeResult.interfaces, { name: ifb, mac: o.macs[3] }] };
  const ipam = { type: 'host-local', ranges: [[{ subnet: '10.99.0.0/24' }]] };
  const portMappings = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];
  const bandwidth = { ingressRate: 1000000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 };
  return {
    plugins: [
      trace(0, 'bridge', { ...conf, type: 'bridge', bridge: o.bridge, isGateway: true, ipam }, bridgeResult),
      trace(
        1,
        'portmap',
        { ...conf, type: 'portmap', capabilities: { portMappings: true }, runtimeConfig: { portMappings }, prevResult: bridgeResult },
        bridgeResult,
      ),
      trace(
        2,
        'bandwidth',
        { ...conf, type: 'bandwidth', capabilities: { bandwidth: true }, runtimeConfig: { bandwidth }, prevResult: bridgeResult },
        final,
      ),
    ],
    result: final,
  };
}

/** the placeholders a run keeps in its record */
function recordedTokens(o: Attached): Record<string, string> {
  const derived = derivedNames(NETWORK, o.containerId);
  return {
    [o.containerId]: '<container-id>',
    [o.netns]: '<netns>',
    [derived.masqChain]: '<masq-chain>',
    [derived.dnatChain]: '<dnat-chain>',
    [derived.ifb[0]!]: '<ifb>',
    [derived.ifb[1]!]: '<ifb>',
    [o.veth]: '<host-veth-0>',
    ...Object.fromEntries(o.macs.map((m, i) => [m, `<mac-${i}>`])),
    [o.ip]: '<pod-ip-0>',
  };
}

function labRun(id: string, o: Attached, kernel: { created: LabKernelItem[]; existedBefore?: LabKernelItem[] }): LabRun {
  const { plugins, result } = addTraces(o);
  return {
    id,
    createdAt: '2026-11-25T20:00:00.000Z',
    text: '{}',
    name: NETWORK,
    cniVersion: '1.0.0',
    capabilities: {},
    containerId: o.containerId,
    netns: o.netns,
    ifName: 'eth0',
    plugins,
    versions: [],
    result: result as unknown as LabRun['result'],
    addOk: true,
    delOk: true,
    kernelCreated: kernel.created,
    leftAfterDel: [],
    keptByDesign: [],
    ...(kernel.existedBefore ? { existedBefore: kernel.existedBefore } : {}),
    forced: [],
    tokens: recordedTokens(o),
    snapshotErrors: [],
    durationMs: 100,
    success: true,
  };
}

async function labWith(runs: LabRun[], pod?: RecordedAdd): Promise<LabService> {
  const dir = await mkdtemp(join(tmpdir(), 'psl-labdiff-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'lab'), { recursive: true });
  for (const r of runs) await writeFile(join(dir, 'lab', `${r.id}.json`), JSON.stringify(r));
  return new LabService({
    options: {
      stateDir: dir,
      netnsDir: join(dir, 'netns'),
      cniConfDir: join(dir, 'net.d'),
      cniBinDirs: ['/usr/lib/cni'],
      pluginTimeoutMs: 5000,
    },
    runner: new NodeProcessRunner(),
    netns: new FakeNetnsManager(join(dir, 'netns')),
    kernel: { read: async () => ({ snapshot: emptySnapshot(), errors: [] }) },
    liveNetworks: async () => [],
    recordedAdd: async (id) => {
      if (!pod || pod.id !== id) throw new Error(`no sandbox ${id}`);
      return pod;
    },
  });
}

const runAttached = (n: number, bridge = 'cni0'): Attached => ({
  containerId: `podscope-lab-20261125T20000${n}Z-abcde${n}`,
  netns: `/run/podscope/netns/podscope-lab-20261125T20000${n}Z-abcde${n}`,
  bridge,
  veth: `veth1a2b3c${n}d`,
  ip: `10.99.0.${10 + n}`,
  macs: ['02:42:0a:63:00:01', `aa:bb:cc:00:00:0${n}`, `0e:11:22:33:44:5${n}`, `6a:00:00:00:00:0${n}`],
});

describe('lab diff: placeholders are given the same way on both sides', () => {
  it('a run and a live pod ADD of the same plugins: no plugin and no result difference', async () => {
    const podAttached: Attached = {
      containerId: 'f'.repeat(8) + '0123456789abcdef'.repeat(3) + 'a'.repeat(8),
      netns: '/var/run/netns/cni-5f1e2d3c-0000-4000-8000-123456789abc',
      bridge: 'cni0',
      veth: 'vethdeadbeef',
      ip: '10.99.0.77',
      macs: ['02:42:0a:63:00:01', 'de:ad:be:ef:00:01', '0e:99:88:77:66:55', '6a:99:99:99:99:99'],
    };
    const { plugins, result } = addTraces(podAttached);
    const pod: RecordedAdd = { id: podAttached.containerId, name: 'web', plugins, netns: podAttached.netns, result };
    const run = labRun('20261125T200001Z-abcde1', runAttached(1), { created: [] });
    const lab = await labWith([run], pod);
    const d = await lab.diff(run.id, `sandbox:${pod.id}`);
    expect(d.plugins.map((p) => [p.phase, p.type, p.same, [...p.stdin, ...p.result].map((c) => c.path)])).toEqual([
      ['ADD', 'bridge', true, []],
      ['ADD', 'portmap', true, []],
      ['ADD', 'bandwidth', true, []],
    ]);
    expect(d.result).toEqual([]);
    // a different bridge is a real difference, and it still shows as the bridge name, not as a placeholder
    const other = labRun('20261125T200002Z-abcde2', runAttached(2, 'lab9'), { created: [] });
    const d2 = await (await labWith([other], pod)).diff(other.id, `sandbox:${pod.id}`);
    expect(d2.plugins[0]!.stdin).toContainEqual({ path: 'bridge', a: 'lab9', b: 'cni0', change: 'changed' });
  });
});

describe('lab diff: a bridge one run created and the next found', () => {
  const bridgeFacts: LabKernelItem[] = [
    { kind: 'link', what: 'lab0 bridge mtu 1500' },
    { kind: 'host-address', what: 'lab0 10.99.0.1/24' },
    { kind: 'qdisc', what: 'dev lab0 noqueue 0: root' },
  ];
  const own = (o: Attached): LabKernelItem[] => [
    { kind: 'link', what: `${o.veth} veth mtu 1500 master lab0 hairpin off` },
    { kind: 'netns-link', what: 'eth0 veth mtu 1500' },
    { kind: 'netns-address', what: `eth0 ${o.ip}/24` },
  ];

  it('is listed as having existed before the second run, not as a kernel difference (with and without the recorded before-state)', async () => {
    const oa = runAttached(3, 'lab0');
    const ob = runAttached(4, 'lab0');
    const a = labRun('20261125T200003Z-abcde3', oa, { created: [...bridgeFacts, ...own(oa)], existedBefore: [] });
    const b = labRun('20261125T200004Z-abcde4', ob, { created: own(ob), existedBefore: bridgeFacts });
    // a record from before the before-state was kept: the bridge it attached to without creating it was there already
    const older = { ...labRun('20261125T200005Z-abcde5', runAttached(5, 'lab0'), { created: own(runAttached(5, 'lab0')) }) };
    const lab = await labWith([a, b, older]);
    for (const second of [b.id, older.id]) {
      const d = await lab.diff(a.id, second);
      expect(d.kernel?.onlyA, second).toEqual([]);
      expect(d.kernel?.onlyB, second).toEqual([]);
      expect(
        d.kernel?.existedBefore?.map((i) => [i.createdBy, i.kind, i.what]),
        second,
      ).toEqual(bridgeFacts.map((i) => ['a', i.kind, i.what]));
      expect(d.kernel?.existedBefore?.[0]?.why).toMatch(new RegExp(`^existed before run ${second} `));
    }
    // the other way round the creator is b's side
    const back = await lab.diff(b.id, a.id);
    expect(back.kernel?.existedBefore?.map((i) => i.createdBy)).toEqual(['b', 'b', 'b']);
    expect(back.kernel?.onlyB).toEqual([]);
  });

  it('a bridge fact the second run did not find (another MTU) is still a difference', async () => {
    const oa = runAttached(6, 'lab0');
    const ob = runAttached(7, 'lab0');
    const a = labRun('20261125T200006Z-abcde6', oa, { created: [...bridgeFacts, ...own(oa)], existedBefore: [] });
    const b = labRun('20261125T200007Z-abcde7', ob, {
      created: [{ kind: 'link', what: 'lab0 bridge mtu 1400' }, ...own(ob)],
      existedBefore: [],
    });
    const d = await (await labWith([a, b])).diff(a.id, b.id);
    expect(d.kernel?.onlyA).toEqual(bridgeFacts);
    expect(d.kernel?.onlyB).toEqual([{ kind: 'link', what: 'lab0 bridge mtu 1400' }]);
    expect(d.kernel?.existedBefore).toBeUndefined();
  });
});

describe('lab diff: a Go panic is the same panic whatever its pointers', () => {
  const trace = (ptr: string, pc: string) =>
    [
      'panic: runtime error: invalid memory address or nil pointer dereference',
      `[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=${pc}]`,
      '',
      'goroutine 1 [running]:',
      `main.cmdCheck(${ptr})`,
      '\tgithub.com/containernetworking/plugins/plugins/meta/bandwidth/main.go:301 +0x2d6',
    ].join('\n');

  it('masks the addresses of a panic trace, and nothing in other text', () => {
    expect(goPanicNoise(trace('0xc0000c4770', '0x536ff6'))).toBe(goPanicNoise(trace('0xc0000b2000', '0x536ff6')));
    // the line numbers and the function stay: another panic is another text
    expect(goPanicNoise(trace('0xc0000c4770', '0x536ff6'))).toContain('main.go:301');
    expect(goPanicNoise('could not check: mark 0x2000/0x2000 not found')).toBe('could not check: mark 0x2000/0x2000 not found');
  });
});
