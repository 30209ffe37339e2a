/**
 * The CNI layer against Debian's real plugins (root only): loopback + bridge/host-local(v4+v6)/portmap/bandwidth
 * in a namespace of our own. Everything created here is named psc-cni-* or is the file's lease (testkit/allocator) and is
 * removed in afterAll, whatever happened in between. The bridge is not a gateway and never masquerades, so no host
 * sysctl or outward NAT is touched.
 */
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeProcessRunner, runChecked } from '../../electron/engine/os/exec';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import { restoreHost, snapshotHost, type HostSnapshot } from '../../testkit/host-cleanup';
import { leaseHost } from '../../testkit/allocator';
import { subnetTextPrefix } from '../../testkit/leak-check';
import type { CniCallRecord, CniManager, CniNamespaceOptions, CniSetupResult } from '../../electron/engine/cni/types';

const PLUGIN_DIR = '/usr/lib/cni';
// bridge, subnets and host port: a lease of the test kit's allocator (files run in parallel)
const lease = leaseHost('cni-real');
afterAll(() => lease.release());
const BRIDGE = lease.name('-cni');
const NETWORK = 'psc-cni-real';
const runner = new NodeProcessRunner();
const sh = (file: string, ...args: string[]) => runChecked(runner, { file, args, timeoutMs: 30_000 });
const shQuiet = (file: string, ...args: string[]) => runner.run({ file, args, timeoutMs: 30_000 }).catch(() => undefined);
const natRules = async (tool: string) => (await sh(tool, '-t', 'nat', '-S')).stdout.split('\n').filter(Boolean);

const canRun =
  process.getuid?.() === 0 &&
  (await access(path.join(PLUGIN_DIR, 'bridge')).then(
    () => true,
    () => false,
  ));

/** bandwidth's ifb name: "bwp" + sha512 hex, 15 chars (newer plugins hash network name + id, older ones the id alone). */
function ifbCandidates(containerId: string): string[] {
  return [NETWORK + containerId, containerId].map((s) => `bwp${createHash('sha512').update(s).digest('hex')}`.slice(0, 15));
}

describe.skipIf(!canRun)('CNI with real plugins', () => {
  const nsName = `psc-cni-${randomBytes(4).toString('hex')}`;
  const netnsPath = `/var/run/netns/${nsName}`;
  const containerId = randomBytes(32).toString('hex');
  const hostPort = lease.port(0);
  const opts: CniNamespaceOptions = {
    args: [
      ['K8S_POD_NAMESPACE', 'default'],
      ['K8S_POD_NAME', 'cni-real'],
      ['K8S_POD_INFRA_CONTAINER_ID', containerId],
      ['K8S_POD_UID', 'uid-1'],
      ['IgnoreUnknown', '1'],
    ],
    capabilities: {
      portMappings: [{ hostPort, containerPort: 80, protocol: 'tcp' }],
      bandwidth: { ingressRate: 1_000_000, ingressBurst: 4294967295, egressRate: 2_000_000, egressBurst: 4294967295 },
      'io.kubernetes.cri.pod-annotations': null,
    },
  };
  let root = '';
  let dataDir = '';
  let cacheDir = '';
  let mgr: CniManager;
  let hostBefore: HostSnapshot;
  const records: CniCallRecord[] = [];
  let setupResult: CniSetupResult | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'psc-cni-real-'));
    const confDir = path.join(root, 'net.d');
    dataDir = path.join(root, 'ipam');
    cacheDir = path.join(root, 'cache');
    await mkdir(confDir);
    hostBefore = snapshotHost();
    await writeFile(
      path.join(confDir, '10-psc.conflist'),
      JSON.stringify({
        cniVersion: '1.0.0',
        name: NETWORK,
        plugins: [
          {
            type: 'bridge',
            bridge: BRIDGE,
            isGateway: false,
            ipMasq: false,
            ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: lease.subnet4(0) }], [{ subnet: lease.subnet6(0) }]] },
          },
          { type: 'portmap', capabilities: { portMappings: true }, snat: false },
          { type: 'bandwidth', capabilities: { bandwidth: true } },
        ],
      }),
    );
    await sh('ip', 'netns', 'add', nsName);
    mgr = createCniManager({ confDir, binDirs: [PLUGIN_DIR], cacheDir, maxConfNum: 1 });
    const view = await mgr.load();
    expect(view.errors).toEqual([]);
  });

  afterAll(async () => {
    if (mgr && setupResult === undefined) await mgr.remove(containerId, netnsPath, opts).catch(() => undefined);
    await shQuiet('ip', 'netns', 'del', nsName);
    await shQuiet('ip', 'link', 'del', BRIDGE);
    for (const ifb of ifbCandidates(containerId)) {
      const r = await runner.run({ file: 'ip', args: ['link', 'show', ifb], timeoutMs: 10_000 });
      if (r.exitCode === 0) await shQuiet('ip', 'link', 'del', ifb);
    }
    restoreHost(hostBefore, []);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('sets up lo and eth0 with both families inside the namespace', async () => {
    setupResult = await mgr.setup(containerId, netnsPath, opts, { pluginTimeoutMs: 30_000, record: (r) => records.push(r) });
    const eth0 = setupResult.interfaces.eth0!;
    expect(eth0.sandbox).toBe(netnsPath);
    const ips = eth0.ipConfigs.map((c) => c.ip);
    expect(ips).toHaveLength(2);
    expect(ips[0]!.startsWith(subnetTextPrefix(lease.subnet4(0)))).toBe(true);
    expect(ips[1]!.startsWith(subnetTextPrefix(lease.subnet6(0)))).toBe(true);
    expect(setupResult.interfaces.lo!.ipConfigs.map((c) => c.ip)).toContain('127.0.0.1');
    expect(Object.keys(setupResult.interfaces)).toContain(BRIDGE);
    expect(Object.keys(setupResult.interfaces).some((n) => n.startsWith('bwp'))).toBe(true);
    expect(setupResult.dns).toHaveLength(2);

    const addrs = (await sh('ip', '-n', nsName, '-o', 'addr', 'show', 'dev', 'eth0')).stdout;
    expect(addrs).toContain(`${ips[0]}/24`);
    expect(addrs).toContain(`${ips[1]}/64`);
    expect((await sh('ip', '-n', nsName, '-o', 'addr', 'show', 'dev', 'lo')).stdout).toContain('127.0.0.1/8');

    const adds = records.filter((r) => r.step === 'cni.plugin').map((r) => `${r.plugin!.type}:${r.ok}`);
    expect(adds.sort()).toEqual(['bandwidth:true', 'bridge:true', 'loopback:true', 'portmap:true']);
    const portmapCall = records.find((r) => r.plugin?.type === 'portmap')!.plugin!;
    expect(JSON.parse(portmapCall.stdin).runtimeConfig).toEqual({ portMappings: opts.capabilities.portMappings });
    expect(JSON.parse(portmapCall.stdin).prevResult.ips).toHaveLength(2);
  });

  it('caches the final results and records the host-local lease', async () => {
    expect(setupResult).toBeDefined();
    const files = await mgr.cachedAttachments(containerId);
    expect(files.map((f) => path.basename(f))).toEqual([`cni-loopback-${containerId}-lo`, `${NETWORK}-${containerId}-eth0`]);
    const doc = JSON.parse(await readFile(files[1]!, 'utf8'));
    expect(doc).toMatchObject({
      kind: 'cniCacheV1',
      containerId,
      ifName: 'eth0',
      networkName: NETWORK,
      netns: netnsPath,
      cniArgs: opts.args,
      capabilityArgs: opts.capabilities,
    });
    expect(doc.result.ips.map((i: { address: string }) => i.address.split('/')[0])).toEqual(
      setupResult!.interfaces.eth0!.ipConfigs.map((c) => c.ip),
    );
    const leases = await readdir(path.join(dataDir, NETWORK));
    expect(leases).toContain(setupResult!.interfaces.eth0!.ipConfigs[0]!.ip);
    expect((await natRules('iptables')).some((l) => l.includes(`--dport ${hostPort}`))).toBe(true);
  });

  it('removes everything it set up', async () => {
    expect(setupResult).toBeDefined();
    await mgr.remove(containerId, netnsPath, opts, { pluginTimeoutMs: 30_000, record: (r) => records.push(r) });
    expect(await mgr.cachedAttachments(containerId)).toEqual([]);
    const leases = await readdir(path.join(dataDir, NETWORK));
    expect(leases.filter((f) => /^\d|:/.test(f))).toEqual([]);
    const eth0 = await runner.run({ file: 'ip', args: ['-n', nsName, 'link', 'show', 'eth0'], timeoutMs: 10_000 });
    expect(eth0.exitCode).not.toBe(0);
    expect((await natRules('iptables')).some((l) => l.includes(`--dport ${hostPort}`))).toBe(false);
    for (const ifb of ifbCandidates(containerId))
      expect((await runner.run({ file: 'ip', args: ['link', 'show', ifb], timeoutMs: 10_000 })).exitCode).not.toBe(0);
    // a second DEL (containerd's Stop then Remove) must be harmless
    await mgr.remove(containerId, '', opts);
  });
});
