import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeCniSandbox } from './fake-cni-sandbox';

const ID = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00';
const NETNS = '/var/run/netns/cni-fake-1234';
const ARGS: Array<[string, string]> = [
  ['K8S_POD_NAMESPACE', 'default'],
  ['K8S_POD_NAME', 'web'],
  ['IgnoreUnknown', '1'],
];
const PORTS = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];
const BANDWIDTH = { ingressRate: 1_000_000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 };
const FIRST_RESULT = {
  cniVersion: '1.0.0',
  interfaces: [{ name: 'br0', mac: '02:00:00:00:00:01' }],
  ips: [{ address: '10.1.0.5/24', gateway: '10.1.0.1', interface: 0 }],
  routes: [{ dst: '0.0.0.0/0' }],
};

describe('CNI ADD/DEL against fake plugins', () => {
  let box: FakeCniSandbox;
  let conflistPath: string;

  beforeEach(async () => {
    box = await FakeCniSandbox.create(['first', 'middle', 'last']);
    conflistPath = await box.writeConflist('10-net.conflist', 'testnet', '1.0.0', [
      { type: 'first', capabilities: { portMappings: true, bandwidth: false }, fake: { add: { result: FIRST_RESULT } } },
      {
        type: 'middle',
        capabilities: { bandwidth: true, mac: true },
        custom: { keep: ['me'] },
        fake: { add: { chain: { iface: 'veth1' } } },
      },
      { type: 'last', fake: { add: { chain: { iface: 'eth0', ip: 'fd00::5/64' } } } },
    ]);
  });
  afterEach(async () => box.dispose());

  async function setup(env?: NodeJS.ProcessEnv) {
    const mgr = box.manager({ env });
    const view = await mgr.load();
    expect(view.ready).toBe(true);
    const result = await mgr.setup(ID, NETNS, { args: ARGS, capabilities: { portMappings: PORTS, bandwidth: BANDWIDTH } }, box.hooks());
    return { mgr, result };
  }

  it('chains each ADD result into the next plugin as prevResult', async () => {
    await setup();
    const adds = (await box.log()).filter((e) => e.verb === 'ADD');
    expect(adds.map((e) => e.type)).toEqual(['first', 'middle', 'last']);
    expect(adds[0]!.conf).not.toHaveProperty('prevResult');
    expect(adds[1]!.conf.prevResult).toEqual({ ...FIRST_RESULT, dns: {} });
    expect((adds[2]!.conf.prevResult as { interfaces: Array<{ name: string }> }).interfaces.map((i) => i.name)).toEqual(['br0', 'veth1']);
  });

  it('injects name/cniVersion, keeps unknown keys and gives each plugin only the capabilities it declares', async () => {
    await setup();
    const [first, middle, last] = (await box.log()).filter((e) => e.verb === 'ADD');
    for (const e of [first, middle, last]) expect(e!.conf).toMatchObject({ name: 'testnet', cniVersion: '1.0.0' });
    expect(first!.conf.runtimeConfig).toEqual({ portMappings: PORTS });
    expect(middle!.conf.runtimeConfig).toEqual({ bandwidth: BANDWIDTH });
    expect(middle!.conf.custom).toEqual({ keep: ['me'] });
    expect(middle!.conf.capabilities).toEqual({ bandwidth: true, mac: true });
    expect(last!.conf).not.toHaveProperty('runtimeConfig');
  });

  it('sends all six CNI_* variables over the engine env, later wins', async () => {
    // the fake plugin records CNI_* and PODSCOPE_* variables: the runner's own PODSCOPE_* settings (worker counts,
    // profile dirs) are left out so only what the engine passes is compared
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PODSCOPE_')));
    await setup({ ...inherited, PODSCOPE_PROBE: 'from-engine', CNI_IFNAME: 'stale' });
    const first = (await box.log()).find((e) => e.type === 'first')!;
    expect(first.env).toEqual({
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: ID,
      CNI_NETNS: NETNS,
      CNI_IFNAME: 'eth0',
      CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web;IgnoreUnknown=1',
      CNI_PATH: box.binDir,
      PODSCOPE_PROBE: 'from-engine',
    });
  });

  it('records every exec with the exact stdin the plugin read and one record per network', async () => {
    await setup();
    const log = await box.log();
    const pluginRecords = box.records.filter((r) => r.step === 'cni.plugin');
    expect(pluginRecords).toHaveLength(4); // loopback + 3
    for (const e of log) {
      const rec = pluginRecords.find((r) => r.plugin!.type === e.type)!;
      expect(rec.plugin!.stdin).toBe(e.stdin);
      expect(rec.plugin!.env).toEqual(Object.fromEntries(Object.entries(e.env).filter(([k]) => k.startsWith('CNI_'))));
      expect(rec.plugin).toMatchObject({
        verb: 'ADD',
        network: 'testnet',
        ifName: 'eth0',
        exitCode: 0,
        timedOut: false,
        binary: path.join(box.binDir, e.type),
      });
    }
    expect(pluginRecords.find((r) => r.plugin!.type === 'last')!.plugin!.stdout).toContain('fd00::5/64');
    expect(
      box.records
        .filter((r) => r.step === 'cni.network')
        .map((r) => r.label)
        .sort(),
    ).toEqual(['ADD cni-loopback (lo)', 'ADD testnet (eth0)']);
  });

  it('returns go-cni createResult over lo and eth0', async () => {
    const { result } = await setup();
    expect(result.networks.map((n) => [n.network, n.ifName])).toEqual([
      ['cni-loopback', 'lo'],
      ['testnet', 'eth0'],
    ]);
    expect(result.interfaces.eth0!.ipConfigs).toEqual([{ ip: 'fd00::5' }]);
    expect(result.interfaces.br0!.ipConfigs).toEqual([{ ip: '10.1.0.5', gateway: '10.1.0.1' }]);
    expect(result.dns).toHaveLength(2);
    expect(result.routes).toContainEqual({ dst: '0.0.0.0/0' });
  });

  it('writes a libcni cniCacheV1 file with the conflist bytes, args and final result', async () => {
    const { mgr } = await setup();
    const file = path.join(box.cacheDir, 'results', `testnet-${ID}-eth0`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual([
      'kind',
      'containerId',
      'config',
      'ifName',
      'networkName',
      'netns',
      'cniArgs',
      'capabilityArgs',
      'result',
    ]);
    expect(doc).toMatchObject({
      kind: 'cniCacheV1',
      containerId: ID,
      ifName: 'eth0',
      networkName: 'testnet',
      netns: NETNS,
      cniArgs: ARGS,
      capabilityArgs: { portMappings: PORTS, bandwidth: BANDWIDTH },
    });
    expect(Buffer.from(doc.config as string, 'base64').toString()).toBe(await readFile(conflistPath, 'utf8'));
    const printed = JSON.parse(box.records.find((r) => r.plugin?.type === 'last')!.plugin!.stdout) as Record<string, unknown>;
    expect(doc.result).toEqual({ ...printed, dns: {} });
    expect(await mgr.cachedAttachments(ID)).toEqual([path.join(box.cacheDir, 'results', `cni-loopback-${ID}-lo`), file]);
  });

  it('DEL runs plugins in reverse, each with the final ADD result and the capability args passed now', async () => {
    const { mgr } = await setup();
    const cached = JSON.parse(await readFile(path.join(box.cacheDir, 'results', `testnet-${ID}-eth0`), 'utf8')).result;
    await box.clearLog();
    const newPorts = [{ hostPort: 9090, containerPort: 90, protocol: 'udp' }];
    await mgr.remove(ID, NETNS, { args: ARGS, capabilities: { portMappings: newPorts } }, box.hooks());
    const dels = await box.log();
    expect(dels.map((e) => `${e.verb} ${e.type}`)).toEqual(['DEL last', 'DEL middle', 'DEL first']);
    for (const e of dels) expect(e.conf.prevResult).toEqual(cached);
    expect(dels.find((e) => e.type === 'first')!.conf.runtimeConfig).toEqual({ portMappings: newPorts });
    expect(dels.find((e) => e.type === 'middle')!.conf).not.toHaveProperty('runtimeConfig');
    expect(dels[0]!.env.CNI_COMMAND).toBe('DEL');
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
  });

  // Beyond go-cni, which DELs only the networks loaded now: an edited or emptied conf dir must not leak the IP an
  // earlier ADD took, so attachments whose network is gone are deleted with the conflist bytes the cache kept.
  it.each([
    [
      'renamed to another network',
      async () => {
        await box.writeConflist('10-net.conflist', 'othernet', '1.0.0', [{ type: 'first' }]);
      },
    ],
    [
      'removed (CNI no longer ready)',
      async () => {
        await rm(conflistPath);
      },
    ],
  ])('DEL still reaches an attachment whose conflist was %s since ADD', async (_what, edit) => {
    const { mgr } = await setup();
    await edit();
    await mgr.load();
    await box.clearLog();
    await mgr.remove(ID, NETNS, { args: ARGS, capabilities: {} }, box.hooks());
    const dels = (await box.log()).filter((e) => e.conf.name === 'testnet');
    expect(dels.map((e) => `${e.verb} ${e.type}`)).toEqual(['DEL last', 'DEL middle', 'DEL first']);
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
  });

  it('DEL without a cache file, or with a corrupt one, runs without prevResult and leaves no file', async () => {
    const { mgr } = await setup();
    const file = path.join(box.cacheDir, 'results', `testnet-${ID}-eth0`);
    await writeFile(file, '{"kind":"cniCacheV1","result":{"cniVersion":"1.0.0","ips":[{"address":"garbage"}]}}');
    await box.clearLog();
    await mgr.remove(ID, NETNS, { args: ARGS, capabilities: {} }, box.hooks());
    for (const e of await box.log()) expect(e.conf).not.toHaveProperty('prevResult');
    expect(box.records.find((r) => r.label === 'DEL testnet (eth0)')!.detail).toMatchObject({ prevResult: 'cache-discarded' });
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
    await box.clearLog();
    await mgr.remove(ID, NETNS, { args: ARGS, capabilities: {} }, box.hooks());
    expect((await box.log()).map((e) => e.conf.prevResult)).toEqual([undefined, undefined, undefined]);
  });
});

describe('CNI version handling against fake plugins', () => {
  let box: FakeCniSandbox;
  beforeEach(async () => {
    box = await FakeCniSandbox.create(['a', 'b']);
  });
  afterEach(async () => box.dispose());

  it('converts a 1.0.0 result to the 0.4.0 list version before injecting it', async () => {
    await box.writeConflist('10-old.conflist', 'old', '0.4.0', [
      {
        type: 'a',
        fake: {
          add: {
            result: { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', mtu: 1400 }], ips: [{ address: '10.2.0.9/16', interface: 0 }] },
          },
        },
      },
      { type: 'b' },
    ]);
    const mgr = box.manager();
    await mgr.load();
    await mgr.setup(ID, NETNS, { args: [], capabilities: {} }, box.hooks());
    const b = (await box.log()).find((e) => e.type === 'b')!;
    expect(b.conf.prevResult).toEqual({
      cniVersion: '0.4.0',
      interfaces: [{ name: 'eth0' }],
      ips: [{ version: '4', address: '10.2.0.9/16', interface: 0 }],
      dns: {},
    });
  });

  it('takes a result without cniVersion to be in the list version', async () => {
    await box.writeConflist('10-nov.conflist', 'nov', '0.3.1', [
      { type: 'a', fake: { add: { result: { ips: [{ version: '4', address: '10.3.0.2/24' }] } } } },
      { type: 'b' },
    ]);
    const mgr = box.manager();
    await mgr.load();
    const out = await mgr.setup(ID, NETNS, { args: [], capabilities: {} }, box.hooks());
    expect((await box.log()).find((e) => e.type === 'b')!.conf.prevResult).toMatchObject({ cniVersion: '0.3.1' });
    expect(out.networks[1]!.result).toMatchObject({ cniVersion: '1.0.0', ips: [{ address: '10.3.0.2/24' }] });
    expect(out.interfaces.eth0!.ipConfigs).toEqual([{ ip: '10.3.0.2' }]);
  });

  it('a list older than 0.4.0 gets no cached prevResult on DEL, but the cache is still removed', async () => {
    await box.writeConflist('10-old.conflist', 'old', '0.3.1', [{ type: 'a' }, { type: 'b' }]);
    const mgr = box.manager();
    await mgr.load();
    await mgr.setup(ID, NETNS, { args: [], capabilities: {} }, box.hooks());
    await box.clearLog();
    await mgr.remove(ID, NETNS, { args: [], capabilities: {} }, box.hooks());
    const dels = await box.log();
    expect(dels.map((e) => e.type)).toEqual(['b', 'a']);
    for (const e of dels) expect(e.conf).not.toHaveProperty('prevResult');
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
  });

  it('STATUS execs each plugin of a 1.1.0 list with only name/cniVersion injected, and nothing for older lists', async () => {
    await box.writeConflist('10-new.conflist', 'new', '1.1.0', [{ type: 'a', capabilities: { portMappings: true } }, { type: 'b' }]);
    await box.writeConflist('20-older.conflist', 'older', '1.0.0', [{ type: 'a' }]);
    const mgr = box.manager({ maxConfNum: 0 });
    await mgr.load();
    await mgr.status(box.hooks());
    const log = await box.log();
    expect(log.map((e) => `${e.verb} ${e.type} ${e.conf.name as string}`)).toEqual(['STATUS a new', 'STATUS b new']);
    expect(log[0]!.env).toMatchObject({
      CNI_COMMAND: 'STATUS',
      CNI_CONTAINERID: '',
      CNI_NETNS: '',
      CNI_IFNAME: '',
      CNI_ARGS: '',
      CNI_PATH: box.binDir,
    });
    expect(log[0]!.conf).not.toHaveProperty('runtimeConfig');
  });

  it('STATUS failure is a CniError naming the plugin', async () => {
    await box.writeConflist('10-new.conflist', 'new', '1.1.0', [
      { type: 'a', fake: { status: { stdout: '{"code":50,"msg":"plugin not available"}', exit: 1 } } },
    ]);
    const mgr = box.manager();
    await mgr.load();
    await expect(mgr.status(box.hooks())).rejects.toMatchObject({
      code: 'CniError',
      message: 'plugin type="a" failed (status): plugin not available',
      details: { cniCode: 50 },
    });
  });
});
