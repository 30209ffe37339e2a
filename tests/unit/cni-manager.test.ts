import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import { FAKE_NETWORKS, FakeCniManager } from '../../testkit/fakes/fake-cni';
import type { CniCallRecord } from '../../electron/engine/cni/types';

const ID = 'abc123';
const OPTS = {
  args: [['IgnoreUnknown', '1']] as Array<[string, string]>,
  capabilities: { portMappings: [{ hostPort: 80, containerPort: 80, protocol: 'tcp' }] },
};

/** Answers ADD with a tiny result (an interface-less one on eth0) and remembers every request; no process is started. */
class ScriptedRunner implements ProcessRunner {
  readonly requests: ExecRequest[] = [];
  async run(req: ExecRequest): Promise<ExecResult> {
    this.requests.push(req);
    const result =
      req.env?.CNI_IFNAME === 'lo'
        ? { interfaces: [{ name: 'lo' }], ips: [{ address: '127.0.0.1/8', interface: 0 }] }
        : { ips: [{ address: '10.9.0.2/24' }] };
    const stdout = req.env?.CNI_COMMAND === 'ADD' ? JSON.stringify(result) : '';
    return { command: req.file, exitCode: 0, signal: null, stdout, stderr: '', durationMs: 0, timedOut: false, canceled: false };
  }
}

describe('CniManager over an injected runner', () => {
  let root: string;
  let runner: ScriptedRunner;
  const dirs = () => ({ confDir: path.join(root, 'net.d'), binDirs: [path.join(root, 'bin')], cacheDir: path.join(root, 'cache') });

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'psc-cni-mgr-'));
    runner = new ScriptedRunner();
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

/**
 * The real manager over a scripted runner for FAKE_NETWORKS' conflist: its ADD records, and its DEL records and error
 * when portmap's DEL fails.
 */
async function realManagerRecords(): Promise<{ add: CniCallRecord[]; del: CniCallRecord[]; delError: Error }> {
  const root = await mkdtemp(path.join(tmpdir(), 'psc-cni-real-'));
  try {
    const confDir = path.join(root, 'net.d');
    const binDir = path.join(root, 'bin');
    await mkdir(confDir);
    await mkdir(binDir);
    const net = FAKE_NETWORKS.find((n) => n.ifName === 'eth0')!;
    for (const t of ['loopback', ...net.plugins.map((p) => p.type as string)]) await writeFile(path.join(binDir, t), '');
    await writeFile(
      path.join(confDir, `10-${net.name}.conflist`),
      JSON.stringify({ cniVersion: net.cniVersion, name: net.name, plugins: net.plugins }),
    );
    const scripted = new ScriptedRunner();
    const runner: ProcessRunner = {
      run: async (req) =>
        req.env?.CNI_COMMAND === 'DEL' && req.file.endsWith('/portmap')
          ? {
              command: req.file,
              exitCode: 1,
              signal: null,
              stdout: '{"code":999,"msg":"iptables busy"}',
              stderr: '',
              durationMs: 0,
              timedOut: false,
              canceled: false,
            }
          : scripted.run(req),
    };
    const mgr = createCniManager({ confDir, binDirs: [binDir], cacheDir: path.join(root, 'cache'), maxConfNum: 1, runner });
    await mgr.load();
    const add: CniCallRecord[] = [];
    const del: CniCallRecord[] = [];
    await mgr.setup(ID, '/n', OPTS, { record: (r) => add.push(r) });
    const delError = (await mgr.remove(ID, '/n', OPTS, { record: (r) => del.push(r) }).catch((e: unknown) => e)) as Error;
    return { add, del, delError };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

describe('FakeCniManager', () => {
  it('walks ADD in order and DEL in reverse, records like the real one and fails where told', async () => {
    const fake = new FakeCniManager();
    const records: CniCallRecord[] = [];
    const out = await fake.setup(ID, '/n', OPTS, { record: (r) => records.push(r) });
    expect(out.interfaces.eth0!.ipConfigs.map((c) => c.ip)).toEqual(['10.88.0.2', '2001:4860:4860::2']);
    expect(records.filter((r) => r.step === 'cni.plugin').map((r) => r.label)).toEqual([
      'ADD loopback (cni-loopback/lo)',
      'ADD bridge (containerd-net/eth0)',
      'ADD portmap (containerd-net/eth0)',
      'ADD bandwidth (containerd-net/eth0)',
    ]);
    expect(await fake.cachedAttachments(ID)).toHaveLength(2);

    // records and errors as the real manager writes them, for the same networks (not strings kept in the fake)
    const real = await realManagerRecords();
    const fakeDel: CniCallRecord[] = [];
    fake.failures.push({ verb: 'DEL', network: 'containerd-net', index: 1, once: true });
    const fakeErr = (await fake.remove(ID, '/n', OPTS, { record: (r) => fakeDel.push(r) }).catch((e: unknown) => e)) as Error;
    const labels = (rs: CniCallRecord[]) =>
      rs
        .filter((r) => r.step === 'cni.plugin' || r.step === 'cni.network')
        .map((r) => `${r.step} ${r.label} ${r.ok}`)
        .sort();
    expect(labels(records)).toEqual(labels(real.add));
    expect(labels(fakeDel)).toEqual(labels(real.del));
    // the same wording up to the plugin's own message
    const withoutPluginMessage = (e: Error) => e.message.replace(/: [^:]*$/, '');
    expect(withoutPluginMessage(real.delError)).toBe(
      'failed to remove network "containerd-net" (eth0): plugin type="portmap" failed (delete)',
    );
    expect(withoutPluginMessage(fakeErr)).toBe(withoutPluginMessage(real.delError));
    expect(fake.pluginCalls.filter((c) => c.verb === 'DEL').map((c) => c.type)).toEqual(['loopback', 'bandwidth', 'portmap', 'bridge']); // past the failure, as the real one
    await fake.remove(ID, '/n', OPTS);
    expect(await fake.cachedAttachments(ID)).toEqual([]);

    fake.failures.push({ verb: 'ADD', network: 'containerd-net', index: 0 });
    await expect(fake.setup('x2', '/n', OPTS)).rejects.toMatchObject({ code: 'CniError', details: { plugin: 'bridge', index: 0 } });
    expect(fake.preview(OPTS).find((p) => p.type === 'portmap')!.runtimeConfig).toEqual({ portMappings: OPTS.capabilities.portMappings });
  });
});
