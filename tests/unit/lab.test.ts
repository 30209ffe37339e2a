/**
 * The CNI lab's pure parts and its door: JSON positions, the plugin schemas, the live-pod conflict check, the
 * normalising per-plugin diff, the capability args, the atomic save with a backup, and the router's refusal on a
 * CRI endpoint. Runs of real plugins are in tests/real/lab-real.test.ts.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createRouter } from '../../electron/ipc/router';
import { trustOrigins } from '../../electron/ipc/sender';
import { createTestEngine } from '../../testkit/fakes/test-engine';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { overlaps } from '../../electron/engine/lab/cidr';
import { diffSides, jsonDiff, type DiffSide } from '../../electron/engine/lab/diff';
import { lineColumn, locate, parseJsonText } from '../../electron/engine/lab/json-text';
import { emptySnapshot, type LabSnapshotReader } from '../../electron/engine/lab/kernel';
import { LabService } from '../../electron/engine/lab/service';
import { buildCapabilityArgs } from '../../electron/engine/cni/capability-args';
import { findConflicts, validateConflistText } from '../../electron/engine/lab/validate';
import { verdict } from '../../electron/engine/lab/verdict';
import { normalize, derivedNames, type RunNames } from '../../electron/engine/lab/names';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import type { LabPluginTrace } from '../../shared/domain/lab';
import { PodscopeError } from '../../shared/domain/errors';

const BIN = ['/usr/lib/cni'];
const good = (extra: Record<string, unknown> = {}) =>
  JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'lab-net',
      plugins: [
        { type: 'bridge', bridge: 'lab0', ipam: { type: 'host-local', ranges: [[{ subnet: '10.99.0.0/24' }]] }, ...extra },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );

describe('lab: JSON positions', () => {
  it('a parse error carries line and column of where the parser stopped', () => {
    const r = parseJsonText('{\n  "a": 1,\n}');
    expect('issue' in r && r.issue).toMatchObject({ line: 3, column: 1 });
    const end = parseJsonText('{\n  "a": ');
    expect('issue' in end && end.issue).toMatchObject({ line: 2 });
  });

  it('locates a nested value by path', () => {
    const text = good({ mtu: 'x' });
    const at = locate(text, ['plugins', 0, 'mtu'])!;
    expect(text.slice(at, at + 3)).toBe('"x"');
    expect(lineColumn(text, at).line).toBe(text.slice(0, at).split('\n').length);
    expect(locate(text, ['plugins', 5])).toBeUndefined();
  });
});

describe('lab: validation', () => {
  it('checks the envelope with positions and accepts unknown plugin types by their envelope only', async () => {
    const v = await validateConflistText(JSON.stringify({ cniVersion: '1.0.0', name: 'bad name', plugins: [] }), BIN);
    expect(v.ok).toBe(false);
    expect(v.errors.map((e) => e.path)).toEqual(['name', 'plugins']);
    const unknown = await validateConflistText(
      JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'my-plugin', anything: { goes: 1 } }] }),
      BIN,
    );
    expect(unknown.ok).toBe(true);
    expect(unknown.plugins[0]!.type).toBe('my-plugin');
    expect(unknown.plugins[0]!.schema).toBeUndefined();
    expect(unknown.plugins[0]!.binary).toBeUndefined();
    expect(unknown.warnings.join('\n')).toContain('only the envelope is checked');
  });

  it("checks reference plugins' fields (and their host-local IPAM) against the schemas", async () => {
    const v = await validateConflistText(
      good({ mtu: 'big', hairpinMode: 'yes', ipam: { type: 'host-local', ranges: [[{ gateway: '10.99.0.1' }]] } }),
      BIN,
    );
    expect(v.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'plugins.0.mtu: bridge: expected integer, got string',
      'plugins.0.hairpinMode: bridge: expected boolean, got string',
      'plugins.0.ipam.ranges.0.0: host-local: missing required field "subnet"',
    ]);
    expect(v.errors.every((e) => e.line !== undefined)).toBe(true);
  });

  it('a misspelt key of a reference plugin is an error at the key, with the key it most likely meant', async () => {
    const text = good({ hairpin: true });
    const v = await validateConflistText(text, BIN);
    expect(v.ok).toBe(false);
    expect(v.errors).toHaveLength(1);
    const e = v.errors[0]!;
    expect(`${e.path}: ${e.message}`).toBe(
      'plugins.0.hairpin: bridge: unknown key "hairpin" (did you mean hairpinMode?); the plugin ignores it',
    );
    expect(text.slice(e.offset, e.offset! + '"hairpin"'.length)).toBe('"hairpin"');
    expect(e.line).toBe(text.slice(0, e.offset).split('\n').length);
    // nested objects are as strict: a range, a route, the host-local block itself
    const nested = await validateConflistText(
      good({
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: '10.99.0.0/24', gatway: '10.99.0.1' }]],
          routes: [{ dst: '0.0.0.0/0', via: '10.99.0.1' }],
          datadir: '/x',
        },
      }),
      BIN,
    );
    expect(nested.errors.map((x) => `${x.path}: ${x.message}`)).toEqual([
      'plugins.0.ipam.ranges.0.0.gatway: host-local: unknown key "gatway" (did you mean gateway?); the plugin ignores it',
      'plugins.0.ipam.routes.0.via: host-local: unknown key "via"; the plugin ignores it',
    ]);
    // Go decodes keys case-insensitively: a case variant takes effect, so it is only a warning
    const cased = await validateConflistText(good({ HairpinMode: true }), BIN);
    expect(cased.ok).toBe(true);
    expect(cased.warnings.join('\n')).toContain('plugins.0.HairpinMode (line ');
    expect(cased.warnings.join('\n')).toContain('"HairpinMode" is read as "hairpinMode"');
  });

  it('keys every plugin decodes or a runtime injects, and keys only some releases read, are not errors', async () => {
    const v = await validateConflistText(
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'n',
        plugins: [
          {
            type: 'bridge',
            bridge: 'lab0',
            dns: { nameservers: ['10.0.0.10'] },
            args: { cni: {} },
            'cni.dev/x': 1,
            ipam: { type: 'host-local', subnet: '10.99.0.0/24' },
          },
          { type: 'bandwidth', ingressRate: 1000, ingressBurst: 1000, unshapedSubnets: ['10.0.0.0/8'], runtimeConfig: {} },
          { type: 'macvlan', master: 'eth0', mac: '02:00:00:00:00:01', bcqueuelen: 100 },
          { type: 'tuning', dataDir: '/run/cni/tuning' },
        ],
      }),
      BIN,
    );
    expect(v.errors).toEqual([]);
    const ifname = await validateConflistText(
      JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'tuning', ifname: 'eth0' }] }),
      BIN,
    );
    expect(ifname.errors.map((e) => e.path)).toEqual(['plugins.0.ifname']);
  });

  it('an impossible CIDR, a subnet host-local cannot allocate from and a range outside its subnet are errors', async () => {
    const sub = (subnet: string, extra: Record<string, unknown> = {}) =>
      validateConflistText(good({ ipam: { type: 'host-local', ranges: [[{ subnet, ...extra }]] } }), BIN).then((v) =>
        v.errors.map((e) => `${e.path}: ${e.message}`),
      );
    expect(await sub('10.1.0.0/33')).toEqual([
      'plugins.0.ipam.ranges.0.0.subnet: host-local: "10.1.0.0/33": the prefix length must be 0-32 for an IPv4 address',
    ]);
    expect(await sub('10.1.0.0/24')).toEqual([]);
    expect(await sub('fd00::/129')).toEqual([
      'plugins.0.ipam.ranges.0.0.subnet: host-local: "fd00::/129": the prefix length must be 0-128 for an IPv6 address',
    ]);
    expect(await sub('10.1.300.0/24')).toEqual([
      'plugins.0.ipam.ranges.0.0.subnet: host-local: "10.1.300.0/24": "10.1.300.0" is not an IP address',
    ]);
    expect(await sub('10.1.0.0/31')).toEqual([
      'plugins.0.ipam.ranges.0.0.subnet: host-local: 10.1.0.0/31 is too small to allocate from (host-local needs a prefix of /30 or shorter)',
    ]);
    expect(await sub('10.1.0.5/24')).toEqual([
      'plugins.0.ipam.ranges.0.0.subnet: host-local: 10.1.0.5/24 has host bits set; the network address for /24 is 10.1.0.0',
    ]);
    expect(await sub('10.1.0.0/24', { rangeStart: '10.2.0.10', gateway: '10.1.0.1x' })).toEqual([
      'plugins.0.ipam.ranges.0.0.gateway: host-local: "10.1.0.1x" is not an IP address',
      'plugins.0.ipam.ranges.0.0.rangeStart: host-local: rangeStart 10.2.0.10 is not in 10.1.0.0/24',
    ]);
    const route = await validateConflistText(
      good({ ipam: { type: 'host-local', subnet: '10.1.0.0/24', routes: [{ dst: '0.0.0.0/40' }] } }),
      BIN,
    );
    expect(route.errors.map((e) => e.path)).toEqual(['plugins.0.ipam.routes.0.dst']);
  });

  it('CHECK is supported from 0.4.0 and not with disableCheck', async () => {
    expect((await validateConflistText(good(), BIN)).checkSupported).toBe(true);
    expect((await validateConflistText(good().replace('"1.0.0"', '"0.3.1"'), BIN)).checkSupported).toBe(false);
    const off = JSON.parse(good()) as Record<string, unknown>;
    off.disableCheck = true;
    expect((await validateConflistText(JSON.stringify(off), BIN)).checkSupported).toBe(false);
  });

  it('names the live sandboxes that share the bridge, the subnet or the reservations', () => {
    const list = {
      name: 'lab-net',
      cniVersion: '1.0.0',
      disableCheck: false,
      plugins: JSON.parse(good()).plugins as Array<Record<string, unknown>>,
    };
    const live = [
      {
        sandboxId: 'a'.repeat(64),
        sandboxName: 'web',
        network: 'containerd-net',
        bridges: ['lab0'],
        subnets: ['10.88.0.0/16'],
        ips: ['10.88.0.5'],
        ipamDirs: [],
      },
      {
        sandboxId: 'b'.repeat(64),
        sandboxName: 'db',
        network: 'other',
        bridges: ['cni1'],
        subnets: ['10.99.0.128/25'],
        ips: [],
        ipamDirs: [],
      },
      {
        sandboxId: 'c'.repeat(64),
        sandboxName: 'far',
        network: 'far',
        bridges: ['cni2'],
        subnets: ['10.100.0.0/24'],
        ips: [],
        ipamDirs: [],
      },
    ];
    expect(findConflicts(list, live).map((c) => `${c.sandboxName}: ${c.shares.join(', ')}`)).toEqual([
      'web: bridge lab0',
      'db: subnet 10.99.0.0/24 overlaps 10.99.0.128/25',
    ]);
    expect(overlaps('fd00:1::/64', 'fd00:1::5')).toBe(true);
    expect(overlaps('fd00:1::/64', 'fd00:2::5')).toBe(false);
  });
});

describe('lab: verdict and diff', () => {
  const names = (id: string, veth: string, ip: string): RunNames => ({
    containerId: id,
    network: 'n',
    netns: `/run/netns/${id}`,
    bridges: ['lab0'],
    hostVeths: [veth],
    macs: [],
    podIps: [ip],
    derived: derivedNames('n', id),
  });

  it('counts only what names the run, and splits what the plugins keep by design from leaks', () => {
    const n = names('c1', 'veth1', '10.99.0.2');
    const before = emptySnapshot();
    before.link = ['eth9 device mtu 1500'];
    const afterAdd = emptySnapshot();
    afterAdd.link = [
      'eth9 device mtu 1500',
      'lab0 bridge mtu 1500',
      'veth1 veth mtu 1500 master lab0',
      'vethOTHER veth mtu 1500 master cni0',
    ];
    afterAdd.iptables = ['nat -A CNI-DN-x -j DNAT --to-destination 10.99.0.2:80', 'nat -A OTHER -j DNAT --to-destination 10.99.0.23:80'];
    // another pod's bridge appearing meanwhile, with its address and qdisc, is not this run's
    afterAdd['host-address'] = ['other0 10.50.0.1/24'];
    afterAdd.qdisc = ['dev other0 noqueue 0: root', 'dev veth1 tbf 1: root rate 125000'];
    afterAdd.link.push('other0 bridge mtu 1500');
    const afterDel = emptySnapshot();
    afterDel.link = ['eth9 device mtu 1500', 'lab0 bridge mtu 1500', 'veth1 veth mtu 1500 master lab0'];
    const v = verdict(before, afterAdd, afterDel, n);
    expect(v.created.map((i) => i.what)).toEqual([
      'lab0 bridge mtu 1500',
      'veth1 veth mtu 1500 master lab0',
      'nat -A CNI-DN-x -j DNAT --to-destination 10.99.0.2:80',
      'dev veth1 tbf 1: root rate 125000',
    ]);
    expect(v.kept.map((i) => i.what)).toEqual(['lab0 bridge mtu 1500']);
    expect(v.left.map((i) => i.what)).toEqual(['veth1 veth mtu 1500 master lab0']);
  });

  it('diffs per plugin after replacing run-specific names, so only what the config changed shows', () => {
    const trace = (id: string, ip: string, mtu: number): LabPluginTrace[] => [
      {
        phase: 'ADD',
        verb: 'ADD',
        index: 0,
        type: 'bridge',
        stdin: JSON.stringify({ type: 'bridge', mtu }),
        stdout: JSON.stringify({ ips: [{ address: `${ip}/24` }] }),
        stderr: '',
        exitCode: 0,
        durationMs: 10,
        ok: true,
        startedAt: '',
      },
      {
        phase: 'ADD',
        verb: 'ADD',
        index: 1,
        type: 'portmap',
        stdin: JSON.stringify({ type: 'portmap', prevResult: { ips: [{ address: `${ip}/24` }] }, id }),
        stdout: '{}',
        stderr: '',
        exitCode: 0,
        durationMs: 20,
        ok: true,
        startedAt: '',
      },
    ];
    const side = (id: string, ip: string, mtu: number): DiffSide => {
      const tokens = { [id]: '<container-id>', [ip]: '<pod-ip-0>' };
      return {
        kind: 'run',
        id,
        label: id,
        plugins: trace(id, ip, mtu),
        tokens,
        kernelCreated: [
          { kind: 'netns-link', what: `eth0 veth mtu ${mtu}` },
          { kind: 'netns-address', what: `eth0 ${ip}/24` },
        ],
        leftAfterDel: [],
      };
    };
    const d = diffSides(side('c1', '10.99.0.2', 1400), side('c2', '10.99.0.3', 1450));
    expect(d.plugins.map((p) => [p.type, p.same, p.stdin])).toEqual([
      ['bridge', false, [{ path: 'mtu', a: 1400, b: 1450, change: 'changed' }]],
      ['portmap', true, []],
    ]);
    expect(d.kernel).toEqual({
      onlyA: [{ kind: 'netns-link', what: 'eth0 veth mtu 1400' }],
      onlyB: [{ kind: 'netns-link', what: 'eth0 veth mtu 1450' }],
    });
    expect(normalize('to 10.99.0.2:80 not 10.99.0.23', { '10.99.0.2': '<ip>' })).toBe('to <ip>:80 not 10.99.0.23');
    expect(jsonDiff({ a: [1, 2] }, { a: [1], b: true })).toEqual([
      { path: 'a.1', a: 2, change: 'removed' },
      { path: 'b', b: true, change: 'added' },
    ]);
  });

  it('capability args use the conventional camelCase shapes; an unset burst is 2^32-1 when a rate is set', () => {
    expect(
      buildCapabilityArgs({
        portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }],
        bandwidth: { ingressRate: 1000 },
        mac: 'c2:11:22:33:44:55',
        cgroupPath: '/kubepods',
      }),
    ).toEqual({
      portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }],
      bandwidth: { ingressRate: 1000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 },
      mac: 'c2:11:22:33:44:55',
      cgroupPath: '/kubepods',
    });
  });
});

describe('lab: save and the door', () => {
  async function lab() {
    const dir = await mkdtemp(join(tmpdir(), 'podscope-l1-unit-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const kernel: LabSnapshotReader = { read: async () => ({ snapshot: emptySnapshot(), errors: [] }) };
    const service = new LabService({
      options: {
        stateDir: join(dir, 'state'),
        netnsDir: join(dir, 'netns'),
        cniConfDir: join(dir, 'net.d'),
        cniBinDirs: BIN,
        pluginTimeoutMs: 5000,
      },
      runner: new NodeProcessRunner(),
      netns: new FakeNetnsManager(join(dir, 'netns')),
      kernel,
      liveNetworks: async () => [],
      recordedAdd: async () => {
        throw new PodscopeError('NotFound', 'no such sandbox');
      },
    });
    return { dir, service };
  }

  it('writes atomically into the conf dir, keeps the previous file as a backup, and warns about watchers', async () => {
    const { dir, service } = await lab();
    const first = await service.save({ text: good(), fileName: '10-lab.conflist' });
    expect(first).toMatchObject({ path: join(dir, 'net.d', '10-lab.conflist') });
    expect(first.backup).toBeUndefined();
    expect(first.warning).toMatch(/picks it up at once/);
    await writeFile(first.path, good({ mtu: 1400 }));
    const second = await service.save({ text: good({ mtu: 1500 }), fileName: '10-lab.conflist' });
    expect(second.backup).toMatch(/10-lab\.conflist\.bak-\d{8}T\d{6}Z$/);
    expect(JSON.parse(await readFile(second.backup!, 'utf8')).plugins[0].mtu).toBe(1400);
    expect(JSON.parse(await readFile(second.path, 'utf8')).plugins[0].mtu).toBe(1500);
    // no temp file left behind; nothing with a conf extension but the target
    expect((await readdir(join(dir, 'net.d'))).sort()).toEqual(['10-lab.conflist', expect.stringMatching(/^10-lab\.conflist\.bak-/)]);
    await expect(service.save({ text: '{', fileName: '10-lab.conflist' })).rejects.toSatisfy(
      (e) => e instanceof PodscopeError && e.code === 'InvalidArgument' && /line 1/.test(e.message),
    );
  });

  it('the router serves the lab on the local engine only: a CRI endpoint answers Unimplemented', async () => {
    const fakes = await createTestEngine();
    onTestFinished(() => fakes.close());
    const { service } = await lab();
    const engine = Object.assign(fakes.engine, { lab: service });
    const router = createRouter({
      engine,
      endpoints: createEndpointRegistry({ local: engine }),
      isTrustedSender: trustOrigins(['app://podscope']),
    });
    const sender = { transport: 'electron' as const, url: 'app://podscope/index.html' };
    const ok = await router.handle('lab.validate', { text: good() }, sender);
    expect(ok).toMatchObject({ ok: true, result: { ok: true, name: 'lab-net' } });
    const cri = await router.handle('lab.run', { endpointId: 'cri-1', request: { text: good() } }, sender);
    expect(cri).toMatchObject({ ok: false, error: { code: 'Unimplemented' } });
    expect(await router.handle('lab.list', {}, sender)).toEqual({ ok: true, result: [] });
  });
});
