import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExecRequest, ExecResult } from '../../electron/engine/os/exec';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import { createFakeCni } from '../../testkit/fakes/fake-cni';
import type { CniCallRecord } from '../../electron/engine/cni/types';

const ID = 'abc123';
const OPTS = {
  args: [['IgnoreUnknown', '1']] as Array<[string, string]>,
  capabilities: { portMappings: [{ hostPort: 80, containerPort: 80, protocol: 'tcp' }] },
};

/** Answers ADD with a tiny result (an interface-less one on eth0) and remembers every request; no process is started. */
class CniPluginScript extends ScriptedRunner {
  constructor() {
    super([
      {
        match: () => true,
        answer: (req) => {
          const result =
            req.env?.CNI_IFNAME === 'lo'
              ? { interfaces: [{ name: 'lo' }], ips: [{ address: '127.0.0.1/8', interface: 0 }] }
              : { ips: [{ address: '10.9.0.2/24' }] };
          return { stdout: req.env?.CNI_COMMAND === 'ADD' ? JSON.stringify(result) : '' };
        },
      },
    ]);
  }
  get requests(): ExecRequest[] {
    return this.calls;
  }
}

describe('CniManager over an injected runner', () => {
  let root: string;
  let runner: CniPluginScript;
  const dirs = () => ({ confDir: path.join(root, 'net.d'), binDirs: [path.join(root, 'bin')], cacheDir: path.join(root, 'cache') });

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'psc-cni-mgr-'));
    runner = new CniPluginScript();
    await mkdir(dirs().confDir);
    await mkdir(dirs().binDirs[0]!);
    for (const t of ['loopback', 'bridge', 'portmap']) await writeFile(path.join(dirs().binDirs[0]!, t), '');
    await writeFile(
      path.join(dirs().confDir, '10-net.conflist'),
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'net',
        plugins: [{ type: 'bridge' }, { type: 'portmap', capabilities: { portMappings: true } }],
      }),
    );
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  it("refuses to work before a successful load, with go-cni's reason", async () => {
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner });
    expect(mgr.config()).toMatchObject({ ready: false, notReadyReason: 'cni plugin not initialized' });
    await expect(mgr.setup(ID, '/n', OPTS)).rejects.toMatchObject({ code: 'CniError', message: 'cni plugin not initialized' });
    await expect(mgr.status()).rejects.toThrow('cni plugin not initialized');
    expect(runner.requests).toEqual([]);
  });

  it('reports a conf dir without files through status()', async () => {
    await rm(path.join(dirs().confDir, '10-net.conflist'));
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner });
    await mgr.load();
    await expect(mgr.status()).rejects.toThrow(`no network config found in ${dirs().confDir}: cni plugin not initialized`);
  });

  it('previews runtimeConfig per plugin without exec', async () => {
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner });
    await mgr.load();
    const source = `${dirs().confDir}/10-net.conflist`;
    expect(mgr.preview(OPTS)).toEqual([
      { network: 'cni-loopback', ifName: 'lo', type: 'loopback', index: 0, capabilities: [], runtimeConfig: undefined, binaryFound: true },
      { network: 'net', ifName: 'eth0', source, type: 'bridge', index: 0, capabilities: [], runtimeConfig: undefined, binaryFound: true },
      {
        network: 'net',
        ifName: 'eth0',
        source,
        type: 'portmap',
        index: 1,
        capabilities: ['portMappings'],
        runtimeConfig: { portMappings: OPTS.capabilities.portMappings },
        binaryFound: true,
      },
    ]);
    expect(runner.requests).toEqual([]);
  });

  it('runs setup and remove through the runner with the hook timeout, and uses a legacy bare-result cache file', async () => {
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner });
    await mgr.load();
    const records: CniCallRecord[] = [];
    const out = await mgr.setup(ID, '/n', OPTS, { pluginTimeoutMs: 777, record: (r) => records.push(r) });
    expect(out.interfaces.eth0!.ipConfigs).toEqual([{ ip: '10.9.0.2' }]);
    expect(runner.requests.every((r) => r.timeoutMs === 777)).toBe(true);
    expect(records.filter((r) => r.step === 'cni.plugin')).toHaveLength(3);
    const cacheFile = path.join(dirs().cacheDir, 'results', `net-${ID}-eth0`);
    expect(JSON.parse(await readFile(cacheFile, 'utf8')).result).toEqual({
      cniVersion: '1.0.0',
      ips: [{ address: '10.9.0.2/24' }],
      dns: {},
    });
    // libcni reads a file without kind=cniCacheV1 as a bare result
    await writeFile(cacheFile, JSON.stringify({ cniVersion: '0.4.0', ips: [{ version: '4', address: '10.9.0.7/24' }] }));
    runner.requests.length = 0;
    await mgr.remove(ID, '/n', OPTS);
    const portmapDel = runner.requests.find((r) => r.file.endsWith('/portmap'))!;
    expect(JSON.parse(portmapDel.input!).prevResult).toEqual({ cniVersion: '1.0.0', ips: [{ address: '10.9.0.7/24' }], dns: {} });
    expect(runner.requests.map((r) => `${r.env!.CNI_COMMAND} ${path.basename(r.file)}`)).toEqual([
      'DEL loopback',
      'DEL portmap',
      'DEL bridge',
    ]);
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
  });

  it("after a failed ADD the chain as far as it got is cached (marked incomplete) and is every DEL plugin's prevResult", async () => {
    const failing = new (class extends CniPluginScript {
      override async run(req: ExecRequest): Promise<ExecResult> {
        const r = await super.run(req);
        if (req.env?.CNI_COMMAND !== 'ADD' || !req.file.endsWith('/portmap')) return r;
        return { ...r, exitCode: 1, stdout: JSON.stringify({ code: 999, msg: 'planted failure' }) };
      }
    })();
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner: failing });
    await mgr.load();
    const records: CniCallRecord[] = [];
    await expect(mgr.setup(ID, '/n', OPTS, { record: (r) => records.push(r) })).rejects.toThrow(/planted failure/);
    const cacheFile = path.join(dirs().cacheDir, 'results', `net-${ID}-eth0`);
    const doc = JSON.parse(await readFile(cacheFile, 'utf8'));
    expect(doc.incompleteAdd).toEqual({ failedIndex: 1, failedType: 'portmap', resultIndex: 0, resultType: 'bridge' });
    expect(doc.result).toEqual({ cniVersion: '1.0.0', ips: [{ address: '10.9.0.2/24' }], dns: {} });
    expect(records.find((r) => r.step === 'cni.network' && r.label.startsWith('ADD net'))?.detail).toMatchObject({
      incompleteAdd: { failedIndex: 1 },
    });
    failing.requests.length = 0;
    await mgr.remove(ID, '/n', OPTS, { record: (r) => records.push(r) }, { executedOnAdd: { 'cni-loopback/lo': [0], 'net/eth0': [0, 1] } });
    const dels = failing.requests.filter((r) => r.env?.CNI_IFNAME === 'eth0');
    expect(dels.map((r) => path.basename(r.file))).toEqual(['portmap', 'bridge']);
    for (const del of dels) expect(JSON.parse(del.input!).prevResult).toEqual(doc.result);
    expect(records.find((r) => r.step === 'cni.network' && r.label.startsWith('DEL net'))?.detail).toMatchObject({
      prevResult: 'incomplete-add',
    });
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
  });

  it('an ADD that fails at its first plugin caches nothing: there is no result to give', async () => {
    const failing = new (class extends CniPluginScript {
      override async run(req: ExecRequest): Promise<ExecResult> {
        const r = await super.run(req);
        return req.env?.CNI_COMMAND === 'ADD' && req.file.endsWith('/bridge') ? { ...r, exitCode: 1, stdout: '' } : r;
      }
    })();
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner: failing });
    await mgr.load();
    await expect(mgr.setup(ID, '/n', OPTS)).rejects.toThrow(/plugin type="bridge" failed \(add\)/);
    expect(await mgr.cachedAttachments(ID)).toEqual([path.join(dirs().cacheDir, 'results', `cni-loopback-${ID}-lo`)]);
  });

  it('cachedAttachments only lists cniCacheV1 files of that container', async () => {
    const mgr = createCniManager({ ...dirs(), maxConfNum: 1, runner });
    await mgr.load();
    await mgr.setup(ID, '/n', OPTS);
    await mgr.setup('abc1234', '/n2', OPTS);
    const results = path.join(dirs().cacheDir, 'results');
    await writeFile(path.join(results, `other-${ID}-eth1`), 'not json');
    await writeFile(path.join(results, `spoof-${ID}-eth2`), JSON.stringify({ kind: 'cniCacheV1', containerId: 'someone-else' }));
    expect(await mgr.cachedAttachments(ID)).toEqual([path.join(results, `cni-loopback-${ID}-lo`), path.join(results, `net-${ID}-eth0`)]);
  });
});

describe('the real manager over the fake plugins (testkit)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'psc-cni-fakeplugins-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('allocates dual-stack addresses with host-local, walks ADD in order and DEL in reverse past a failure, and fails where told', async () => {
    const cni = await createFakeCni({ dir: root });
    await cni.load();
    const records: CniCallRecord[] = [];
    const out = await cni.setup(ID, '/n', OPTS, { record: (r) => records.push(r) });
    expect(out.interfaces.eth0!.ipConfigs.map((c) => c.ip)).toEqual(['10.88.0.2', '2001:4860:4860::2']);
    expect(records.filter((r) => r.step === 'cni.plugin' && r.label.includes('containerd-net')).map((r) => r.label)).toEqual([
      'ADD bridge (containerd-net/eth0)',
      'ADD portmap (containerd-net/eth0)',
      'ADD bandwidth (containerd-net/eth0)',
    ]);
    expect(await cni.cachedAttachments(ID)).toHaveLength(2);
    // what the plugins did to the host: the pod's addresses in its netns, portmap's DNAT rules. The networks are
    // attached concurrently (as go-cni does), so which link came first is not a property: compared by name
    expect(Object.fromEntries(cni.plugins.kernel.podLinks('/n').map((l) => [l.name, l.addresses]))).toEqual({
      lo: ['127.0.0.1/8', '::1/128'],
      eth0: ['10.88.0.2/16', '2001:4860:4860::2/64'],
    });
    expect(cni.plugins.kernel.nat.v4.some((l) => l.includes('--to-destination 10.88.0.2:80'))).toBe(true);

    cni.failures.push({ verb: 'DEL', network: 'containerd-net', index: 1, message: 'iptables busy', once: true });
    const delErr = (await cni.remove(ID, '/n', OPTS).catch((e: unknown) => e)) as Error;
    expect(delErr.message).toBe('failed to remove network "containerd-net" (eth0): plugin type="portmap" failed (delete): iptables busy');
    expect(cni.pluginCalls.filter((c) => c.verb === 'DEL' && c.network === 'containerd-net').map((c) => c.type)).toEqual([
      'bandwidth',
      'portmap',
      'bridge',
    ]);
    await cni.remove(ID, '/n', OPTS);
    expect(await cni.cachedAttachments(ID)).toEqual([]);
    expect(cni.plugins.kernel.podLinks('/n')).toEqual([]);
    expect(cni.plugins.kernel.nat.v4).toEqual([]);

    cni.failures.push({ verb: 'ADD', network: 'containerd-net', index: 0 });
    await expect(cni.setup('x2', '/n2', OPTS)).rejects.toMatchObject({ code: 'CniError', details: { plugin: 'bridge', index: 0 } });
    expect(cni.preview(OPTS).find((p) => p.type === 'portmap')!.runtimeConfig).toEqual({ portMappings: OPTS.capabilities.portMappings });
  });

  it('a released address is not handed out again at once (host-local continues after the last one)', async () => {
    const cni = await createFakeCni({ dir: root });
    await cni.load();
    await cni.setup('a1', '/a', OPTS);
    await cni.remove('a1', '/a', OPTS);
    const b = await cni.setup('b1', '/b', OPTS);
    expect(b.interfaces.eth0!.ipConfigs.map((c) => c.ip)).toEqual(['10.88.0.3', '2001:4860:4860::3']);
  });

  it('a plugin that hangs is killed at the timeout; one that prints no result fails at that plugin', async () => {
    const cni = await createFakeCni({ dir: root, defaultPluginTimeoutMs: 50 });
    await cni.load();
    cni.failures.push({ verb: 'ADD', network: 'containerd-net', index: 2, kind: 'hang', once: true });
    await expect(cni.setup('h1', '/h', OPTS)).rejects.toThrow(/plugin type="bandwidth" failed \(add\): netplugin timed out after 50 ms/);
    cni.failures.push({ verb: 'ADD', network: 'containerd-net', index: 1, kind: 'badOutput', once: true });
    await expect(cni.setup('h2', '/h2', OPTS)).rejects.toMatchObject({ code: 'CniError', details: { plugin: 'portmap', index: 1 } });
  });

  it('disableCheck skips CHECK; a CHECK fault fails that network only', async () => {
    const cni = await createFakeCni({ dir: root });
    await cni.load();
    await cni.setup(ID, '/n', OPTS);
    cni.failures.push({ verb: 'CHECK', network: 'containerd-net', index: 0, message: 'Expected IP 10.88.0.2 not found', once: true });
    const failed = await cni.check(ID, '/n', OPTS);
    expect(failed.map((o) => [o.network, o.outcome])).toEqual([
      ['cni-loopback', 'notSupported'],
      ['containerd-net', 'failed'],
    ]);
    expect((await cni.check(ID, '/n', OPTS)).map((o) => o.outcome)).toEqual(['notSupported', 'passed']);
    cni.networks[1]!.extra = { disableCheck: true };
    await cni.writeNetworks();
    await cni.load();
    expect((await cni.check(ID, '/n', OPTS)).map((o) => o.outcome)).toEqual(['notSupported', 'disabled']);
  });
});
