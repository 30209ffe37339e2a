/**
 * A throw-away engine environment for tests and benchmarks that use the real host: temp state/run/cache dirs, a conflist of
 * Debian's bridge + host-local (IPv4 + IPv6) + portmap + bandwidth on a bridge and subnet of the test's own, and a
 * teardown that removes every sandbox, the bridge, portmap's shared chains (if the test added them) and the dirs.
 *
 * Without a `subnet`, the env takes a lease from the test kit's allocator (testkit/allocator.ts): its subnets, bridge
 * name and host ports are then the lease's, so files running in parallel never share one; the lease is released on
 * teardown. The benches, which run alone, may still name a subnet.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type CreateEngineExtras, type EngineOptions } from '../electron/engine/index';
import type { SandboxEngine } from '../electron/engine/service/engine';
import { leaseHost, type HostLease } from './allocator';
import { restoreHost, snapshotHost, type HostSnapshot } from './host-cleanup';
import { findLeftovers, formatLeftovers, sweepLeftovers } from './leak-check';

export interface RealEnvSpec {
  /** short tag used in names, e.g. "t0" ⇒ bridge psc-t0 */
  tag: string;
  /** second octet / hex group of the test subnets: 10.<n>.0.0/24 and fd00:<n>::/64; default: a lease's (see above) */
  subnet?: number;
  cniVersion?: string;
  /** an IPv4 /24 of the test's own instead of 10.<subnet>.0.0/24, beside fd00:<subnet>::/64 (also the route's dst then) */
  subnet4?: string;
  /** bridge (and network) name when the test's resources follow another naming scheme; default the lease's name for
   * the tag (psc-<tag> with a subnet given) */
  bridge?: string;
  /** the bridge plugin's ipMasq (its CNI-<hash> chains in iptables and ip6tables); default off */
  ipMasq?: boolean;
  /** an IPv4-only range given in full (e.g. 10.88.254.0/24) instead of 10.<subnet>.0.0/24 + fd00:<subnet>::/64 */
  ipv4Cidr?: string;
  /** IPv4 only, on the lease's 10.<octet>.0.0/24 */
  ipv4Only?: boolean;
  /** temp dir prefix under the OS temp dir (default podscope-<tag>-) */
  tempPrefix?: string;
  /** a lease the caller already holds (e.g. for host links made before the env): the env uses it and leaves its
   * release to the caller */
  lease?: HostLease;
  /** a netns dir of the env's own (<dir>/netns) instead of the host's /var/run/netns, unmounted on teardown */
  ownNetnsDir?: boolean;
}

type ResolvedSpec = RealEnvSpec & { subnet: number; bridge: string };

function envSubnets(spec: ResolvedSpec): string[] {
  return spec.ipv4Cidr ? [spec.ipv4Cidr] : [spec.subnet4 ?? `10.${spec.subnet}.0.0/24`, `fd00:${spec.subnet}::/64`];
}

export interface RealEnv {
  dir: string;
  bridge: string;
  network: string;
  /** the env's IPv4 and IPv6 pod subnets (CIDRs) and the IPv4 gateway (the bridge's address) */
  subnet4: string;
  subnet6?: string;
  gateway4: string;
  /** the lease the env holds (when no subnet was given): its host ports are the env's */
  lease?: HostLease;
  /** the i-th host port of the env's own (from its lease) */
  port(i?: number): number;
  options: Partial<EngineOptions>;
  ipamDir: string;
  engine(extra?: Partial<EngineOptions>, extras?: CreateEngineExtras): Promise<SandboxEngine>;
  teardown(): Promise<void>;
}

export function conflist(spec: RealEnvSpec & { subnet: number }, ipamDir: string): object {
  const r = { ...spec, bridge: spec.bridge ?? `psc-${spec.tag}` };
  return {
    cniVersion: spec.cniVersion ?? '1.0.0',
    name: r.bridge,
    plugins: [
      {
        type: 'bridge',
        bridge: r.bridge,
        isGateway: true,
        // off unless a test checks the chains it creates: never masquerade outward from a test by accident
        ipMasq: spec.ipMasq ?? false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDir,
          ranges: envSubnets(r).map((subnet) => [{ subnet }]),
          routes: [{ dst: spec.ipv4Cidr ?? spec.subnet4 ?? `10.${spec.subnet}.0.0/16` }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  };
}

export async function createRealEnv(given: RealEnvSpec): Promise<RealEnv> {
  const ownLease = given.subnet === undefined && !given.lease;
  const lease = given.lease ?? (ownLease ? leaseHost(`env ${given.tag}`) : undefined);
  const spec: ResolvedSpec = {
    ...given,
    subnet: given.subnet ?? lease!.octet,
    ipv4Cidr: given.ipv4Cidr ?? (given.ipv4Only && lease ? lease.subnet4(0) : undefined),
    bridge: given.bridge ?? (lease ? lease.name(`-${given.tag}`.slice(0, 15 - lease.name('').length)) : `psc-${given.tag}`),
  };
  const subnets = envSubnets(spec);
  const dir = await mkdtemp(join(tmpdir(), spec.tempPrefix ?? `podscope-${spec.tag}-`));
  const confDir = join(dir, 'net.d');
  const ipamDir = join(dir, 'ipam');
  await mkdir(confDir);
  await writeFile(join(confDir, '10-podscope-test.conflist'), JSON.stringify(conflist(spec, ipamDir), null, 2));
  const before: HostSnapshot = snapshotHost();
  // the env's pods route only their own subnet, so the host's nameservers are out of their reach: a pod without
  // dns_config gets a resolv.conf with none (no DNS path), and a test that wants DNS paths gives dns_config
  const resolvConf = join(dir, 'resolv.conf');
  await writeFile(resolvConf, '# podscope test env: no nameserver (give the pod a dns_config)\n');
  const options: Partial<EngineOptions> = {
    resolvConf,
    stateDir: join(dir, 'state'),
    runDir: join(dir, 'run'),
    cniConfDir: confDir,
    cniBinDirs: ['/usr/lib/cni'],
    cniCacheDir: join(dir, 'cni-cache'),
    pluginTimeoutMs: 30_000,
    ...(spec.ownNetnsDir ? { netnsDir: join(dir, 'netns') } : {}),
  };
  const engines: SandboxEngine[] = [];
  const env: RealEnv = {
    dir,
    bridge: spec.bridge,
    network: spec.bridge,
    subnet4: subnets[0]!,
    subnet6: subnets[1],
    gateway4: subnets[0]!.replace(/\.0\/\d+$/, '.1'),
    lease,
    port(i = 0) {
      if (!lease) throw new Error(`env ${spec.tag} was given a subnet, so it holds no lease and has no ports of its own`);
      return lease.port(i);
    },
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
        subnets,
        ipamDir,
        cacheDir: options.cniCacheDir,
        stateDir: options.stateDir,
        runDir: options.runDir,
        netnsDir: options.netnsDir,
        ownsDirs: true,
      };
      const left = findLeftovers(scope);
      if (left.length > 0) sweepLeftovers(scope);
      restoreHost(before, [env.bridge]);
      // the netns manager made an own netns dir a shared mount point (as iproute2 does for /var/run/netns)
      if (options.netnsDir) unmount(options.netnsDir);
      await rm(dir, { recursive: true, force: true });
      if (ownLease) lease?.release();
      if (left.length > 0) throw new Error(`teardown: removing every sandbox left this behind:\n${formatLeftovers(left)}`);
    },
  };
  return env;
}

function unmount(path: string): void {
  try {
    execFileSync('umount', ['-l', path], { stdio: 'ignore' });
  } catch {
    /* never mounted */
  }
}
