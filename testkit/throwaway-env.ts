/**
 * A throw-away engine environment for tests and benchmarks that use the real host: temp state/run/cache dirs, a conflist of
 * Debian's bridge + host-local (IPv4 + IPv6) + portmap + bandwidth on a bridge and subnet of the test's own, and a
 * teardown that removes every sandbox, the bridge, portmap's shared chains (if the test added them) and the dirs.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type CreateEngineExtras, type EngineOptions } from '../electron/engine/index';
import type { SandboxEngine } from '../electron/engine/service/engine';
import { restoreHost, snapshotHost, type HostSnapshot } from './host-cleanup';
import { findLeftovers, formatLeftovers, sweepLeftovers } from './leak-check';

export interface RealEnvSpec {
  /** short tag used in names, e.g. "t0" ⇒ bridge psc-t0 */
  tag: string;
  /** third octet / hex group of the test subnets: 10.<n>.0.0/24 and fd00:<n>::/64 */
  subnet: number;
  cniVersion?: string;
  /** an IPv4 /24 of the test's own instead of 10.<subnet>.0.0/24, beside fd00:<subnet>::/64 (also the route's dst then) */
  subnet4?: string;
  /** bridge (and network) name when the test's resources follow another naming scheme; default psc-<tag> */
  bridge?: string;
  /** the bridge plugin's ipMasq (its CNI-<hash> chains in iptables and ip6tables); default off */
  ipMasq?: boolean;
  /** an IPv4-only range given in full (e.g. 10.88.254.0/24) instead of 10.<subnet>.0.0/24 + fd00:<subnet>::/64 */
  ipv4Cidr?: string;
  /** temp dir prefix under the OS temp dir (default podscope-<tag>-) */
  tempPrefix?: string;
}

function envSubnets(spec: RealEnvSpec): string[] {
  return spec.ipv4Cidr ? [spec.ipv4Cidr] : [spec.subnet4 ?? `10.${spec.subnet}.0.0/24`, `fd00:${spec.subnet}::/64`];
}

export interface RealEnv {
  dir: string;
  bridge: string;
  network: string;
  options: Partial<EngineOptions>;
  ipamDir: string;
  engine(extra?: Partial<EngineOptions>, extras?: CreateEngineExtras): Promise<SandboxEngine>;
  teardown(): Promise<void>;
}

export function conflist(spec: RealEnvSpec, ipamDir: string): object {
  return {
    cniVersion: spec.cniVersion ?? '1.0.0',
    name: spec.bridge ?? `psc-${spec.tag}`,
    plugins: [
      {
        type: 'bridge',
        bridge: spec.bridge ?? `psc-${spec.tag}`,
        isGateway: true,
        // off unless a test checks the chains it creates: never masquerade outward from a test by accident
        ipMasq: spec.ipMasq ?? false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDir,
          ranges: envSubnets(spec).map((subnet) => [{ subnet }]),
          routes: [{ dst: spec.ipv4Cidr ?? spec.subnet4 ?? `10.${spec.subnet}.0.0/16` }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  };
}

export async function createRealEnv(spec: RealEnvSpec): Promise<RealEnv> {
  const dir = await mkdtemp(join(tmpdir(), spec.tempPrefix ?? `podscope-${spec.tag}-`));
  const confDir = join(dir, 'net.d');
  const ipamDir = join(dir, 'ipam');
  await mkdir(confDir);
  await writeFile(join(confDir, '10-podscope-test.conflist'), JSON.stringify(conflist(spec, ipamDir), null, 2));
  const before: HostSnapshot = snapshotHost();
  const options: Partial<EngineOptions> = {
    stateDir: join(dir, 'state'),
    runDir: join(dir, 'run'),
    cniConfDir: confDir,
    cniBinDirs: ['/usr/lib/cni'],
    cniCacheDir: join(dir, 'cni-cache'),
    pluginTimeoutMs: 30_000,
  };
  const engines: SandboxEngine[] = [];
  const env: RealEnv = {
    dir,
    bridge: spec.bridge ?? `psc-${spec.tag}`,
    network: spec.bridge ?? `psc-${spec.tag}`,
    options,
    ipamDir,
    async engine(extra = {}, extras = {}) {
      const e = await createEngine({ ...options, ...extra }, extras);
      engines.push(e);
      return e;
    },
    async teardown() {
      for (const e of engines) await e.close().catch(() => undefined);
      // A fresh engine sees every sandbox any of them made; remove them all.
      const sweeper = await createEngine(options, { noLock: true }).catch(() => undefined);
      if (sweeper) {
        for (const s of await sweeper.list())
          await sweeper.remove(s.id).catch((e: unknown) => console.error(`teardown: remove ${s.id}: ${(e as Error).message}`));
        await sweeper.close();
      }
      // Once every sandbox is removed, the shared leak checker must find nothing of this env's: a remove that
      // "succeeded" but left a veth, a reservation, a rule or a record fails the test file here.
      const scope = {
        bridge: env.bridge,
        networks: [env.network],
        subnets: envSubnets(spec),
        ipamDir,
        cacheDir: options.cniCacheDir,
        stateDir: options.stateDir,
        runDir: options.runDir,
        ownsDirs: true,
      };
      const left = findLeftovers(scope);
      if (left.length > 0) sweepLeftovers(scope);
      restoreHost(before, [env.bridge]);
      await rm(dir, { recursive: true, force: true });
      if (left.length > 0) throw new Error(`teardown: removing every sandbox left this behind:\n${formatLeftovers(left)}`);
    },
  };
  return env;
}
