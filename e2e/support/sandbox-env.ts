/**
 * An isolated world for one e2e run: its own state/run/netns/cache dirs under a temp dir, its own conf dir with the
 * `psc-e2e` conflist (the worker's leased bridge without masquerade, host-local v4+v6 with its own dataDir, portmap, bandwidth),
 * the real engine (createEngine), the endpoint registry browser mode really uses (`createEndpointRegistry`, so the
 * UI can add CRI endpoints) and browser mode on 127.0.0.1. `dispose` closes every CRI connection, removes every
 * sandbox the engine knows, then the bridge and the temp dir, and keeps going past individual failures so one leak never hides another.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createEngine } from '../../electron/engine/index';
import { restoreHost, snapshotHost } from '../../testkit/host-cleanup';
import type { EngineOptions } from '../../electron/engine/common/options';
import type { Engine } from '../../electron/engine/service/engine-api';
import { startBrowserHost, type BrowserHost } from '../../electron/host/browser-host';
import { assembleAppCore } from '../../electron/core/app-core';
import type { CriEndpointRegistry } from '../../electron/endpoints';
import { teardownSteps } from './attempts';
import { leaseHost } from '../../testkit/allocator';

const run = promisify(execFile);

/**
 * This worker's slot of the host (testkit/allocator.ts): Playwright runs spec files in several workers at once, each
 * with an engine, a bridge, subnets and host ports of its own, so no two workers' pods, rules or listeners meet.
 * (Taken when the module loads: in each worker, and in the runner that lists the specs; released at exit.)
 */
export const E2E_LEASE = leaseHost(`e2e worker ${process.env.TEST_WORKER_INDEX ?? 'runner'}`);
/** the i-th host port of this worker (a spec's pods and port-forwards take theirs from here, never a fixed number) */
export const e2ePort = (i: number): number => E2E_LEASE.port(i);
// The bridge and subnet are the lease's; PODSCOPE_E2E_BRIDGE/SUBNET still pin them for a run by hand.
export const E2E_BRIDGE = process.env.PODSCOPE_E2E_BRIDGE ?? E2E_LEASE.name('e2e');
// the network's name is per engine (its own conf dir): every worker's is psc-e2e
export const E2E_NETWORK = process.env.PODSCOPE_E2E_BRIDGE ? `${process.env.PODSCOPE_E2E_BRIDGE}-net` : 'psc-e2e';
/** second octet of the v4 /24 and the v6 prefix (10.<n>.0.0/24, fd00:<n>::/64) */
export const E2E_SUBNET_N = Number(process.env.PODSCOPE_E2E_SUBNET ?? process.env.PODSCOPE_E2E_NET ?? E2E_LEASE.octet);
/** the v4 /24 without its last octet: 10.<n>.0 unless PODSCOPE_E2E_V4_PREFIX names another (e.g. 10.88.249) */
export const E2E_V4_PREFIX = process.env.PODSCOPE_E2E_V4_PREFIX ?? `10.${E2E_SUBNET_N}.0`;
export const E2E_V4_SUBNET = `${E2E_V4_PREFIX}.0/24`;
export const E2E_V6_SUBNET = `fd00:${E2E_SUBNET_N}::/64`;
export const E2E_TMP_PREFIX = process.env.PODSCOPE_E2E_TMP_PREFIX ?? 'psc-e2e-';

export function e2eConflist(ipamDataDir: string) {
  return {
    cniVersion: '1.0.0',
    name: E2E_NETWORK,
    plugins: [
      {
        type: 'bridge',
        bridge: E2E_BRIDGE,
        isGateway: true,
        // never masquerade outward from a test network
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDataDir,
          ranges: [[{ subnet: E2E_V4_SUBNET }], [{ subnet: E2E_V6_SUBNET }]],
          routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  };
}

export interface SandboxEnv {
  root: string;
  options: Partial<EngineOptions>;
  engine: Engine;
  /** "local" + the CRI endpoints added through the UI */
  endpoints: CriEndpointRegistry;
  host: BrowserHost;
  dispose(): Promise<string[]>;
}

export async function createSandboxEnv(opts: { rendererDir?: string; port?: number } = {}): Promise<SandboxEnv> {
  const root = await mkdtemp(join(tmpdir(), E2E_TMP_PREFIX));
  const hostBefore = snapshotHost();
  const dirs = {
    stateDir: join(root, 'state'),
    runDir: join(root, 'run'),
    netnsDir: join(root, 'netns'),
    cniConfDir: join(root, 'net.d'),
    cniCacheDir: join(root, 'cni-cache'),
    ipam: join(root, 'ipam'),
  };
  for (const d of Object.values(dirs)) await mkdir(d, { recursive: true });
  await writeFile(join(dirs.cniConfDir, '10-psc-e2e.conflist'), JSON.stringify(e2eConflist(dirs.ipam), null, 2));
  // The e2e network routes only its own subnet (no masquerade), so the host's nameservers cannot answer a pod: a pod
  // without dns_config gets a resolv.conf with none (no DNS path), as in the test kit's envs; a spec that wants DNS
  // paths gives dns_config.
  const resolvConf = join(root, 'resolv.conf');
  await writeFile(resolvConf, '# podscope e2e env: no nameserver (give the pod a dns_config)\n');
  const options: Partial<EngineOptions> = {
    stateDir: dirs.stateDir,
    runDir: dirs.runDir,
    netnsDir: dirs.netnsDir,
    cniConfDir: dirs.cniConfDir,
    cniCacheDir: dirs.cniCacheDir,
    cniBinDirs: ['/usr/lib/cni'],
    ipPreference: 'ipv4',
    resolvConf,
  };
  let engine: Engine | undefined;
  let host: BrowserHost | undefined;
  let endpoints: CriEndpointRegistry | undefined;
  const dispose = async (): Promise<string[]> => {
    const { attempt, problems } = teardownSteps();
    if (host) await attempt('close host', () => host!.close());
    if (endpoints) await attempt('close CRI endpoints', async () => endpoints!.close());
    if (engine) {
      const sandboxes = await engine.list().catch(() => []);
      for (const s of sandboxes) {
        await attempt(`stop ${s.id}`, () => engine!.stop(s.id));
        await attempt(`remove ${s.id}`, () => engine!.remove(s.id));
      }
      await attempt('close engine', () => engine!.close());
    }
    await attempt('delete bridge and the portmap chains this run added', async () => restoreHost(hostBefore, [E2E_BRIDGE]));
    // The engine makes its netns dir a shared mount point (as iproute2 does); unmount before deleting.
    await attempt('unmount netns dir', async () => {
      const mounts = await readFile('/proc/self/mounts', 'utf8');
      const ours = mounts
        .split('\n')
        .map((l) => l.split(' ')[1] ?? '')
        .filter((m) => m === root || m.startsWith(`${root}/`));
      for (const m of ours.sort((a, b) => b.length - a.length)) await run('umount', ['-l', m]);
    });
    await attempt('remove temp dir', () => rm(root, { recursive: true, force: true }));
    return problems;
  };
  try {
    engine = await createEngine(options);
    const core = assembleAppCore(engine);
    endpoints = core.endpoints;
    host = await startBrowserHost({ core, rendererDir: opts.rendererDir, port: opts.port });
  } catch (e) {
    await dispose();
    throw e;
  }
  return { root, options, engine, endpoints: endpoints!, host, dispose };
}
