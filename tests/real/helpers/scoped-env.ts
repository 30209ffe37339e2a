/**
 * A throw-away real environment whose every host resource is named after the test (its own bridge, subnet, temp
 * dir, netns dir, runc root, CNI cache and IPAM dir), plus a leak check scoped to exactly those, so tests of others
 * running at the same time never show up as leaks and are never touched by the cleanup.
 *
 * The host-wide part of the leak check is testkit/leak-check.ts's; this adds what only a scoped environment has: its
 * own netns dir, runc root, CNI cache temp files and state records (the SIGKILL loop checks them).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createEngine, type EngineOptions } from '../../../electron/engine/index';
import { leaseHost } from '../../../testkit/allocator';
import { restoreHost, snapshotHost, type HostSnapshot } from '../../../testkit/host-cleanup';
import { findLeftovers, runBatched } from '../../../testkit/leak-check';
import { TEST_RESOLV_CONF } from '../../../testkit/test-resolv-conf';

export interface ScopedEnv {
  dir: string;
  bridge: string;
  /** 10.<subnet>.0.0/24 and fd00:<subnet>::/64 */
  subnet: number;
  /** the i-th host port of the env's own (its lease's) */
  port(i: number): number;
  ipamDir: string;
  options: Partial<EngineOptions> & Pick<EngineOptions, 'stateDir' | 'runDir' | 'netnsDir' | 'cniCacheDir' | 'cniConfDir'>;
  /** CLI flags selecting the same dirs */
  flags: string[];
  cleanup(): Promise<void>;
}

export function sh(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return (e as { stdout?: string }).stdout ?? '';
  }
}

function ls(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Its subnets, bridge name and host ports are a lease of the test kit's allocator, released by cleanup(). */
export async function createScopedEnv(tag: string): Promise<ScopedEnv> {
  const lease = leaseHost(`scoped ${tag}`);
  const subnet = lease.octet;
  const dir = await mkdtemp(join('/tmp', `podscope-r2-${tag}-`));
  const bridge = lease.name(`-${tag}`.slice(0, 15 - lease.name('').length));
  const confDir = join(dir, 'net.d');
  const ipamDir = join(dir, 'ipam');
  await mkdir(confDir);
  await writeFile(
    join(confDir, '10-r2.conflist'),
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: bridge,
        plugins: [
          {
            type: 'bridge',
            bridge,
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              dataDir: ipamDir,
              ranges: [[{ subnet: `10.${subnet}.0.0/24` }], [{ subnet: `fd00:${subnet}::/64` }]],
            },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
          { type: 'bandwidth', capabilities: { bandwidth: true } },
        ],
      },
      null,
      2,
    ),
  );
  const before: HostSnapshot = snapshotHost();
  const options = {
    stateDir: join(dir, 'state'),
    runDir: join(dir, 'run'),
    netnsDir: join(dir, 'netns'),
    cniConfDir: confDir,
    resolvConf: TEST_RESOLV_CONF,
    cniBinDirs: ['/usr/lib/cni'],
    cniCacheDir: join(dir, 'cni-cache'),
    pluginTimeoutMs: 30_000,
  };
  const flags = [
    '--cni-conf-dir',
    confDir,
    '--cni-bin-dir',
    '/usr/lib/cni',
    '--cni-cache-dir',
    options.cniCacheDir,
    '--state-dir',
    options.stateDir,
    '--run-dir',
    options.runDir,
    '--netns-dir',
    options.netnsDir,
  ];
  return {
    dir,
    bridge,
    subnet,
    port: (i) => lease.port(i),
    ipamDir,
    options,
    flags,
    async cleanup() {
      // a sweeper on the same dirs removes whatever sandbox is left (ours only: it is our state dir)
      const sweeper = await createEngine(options, { noLock: true, log: () => undefined }).catch(() => undefined);
      if (sweeper) {
        for (const s of await sweeper.list()) await sweeper.remove(s.id).catch(() => undefined);
        await sweeper.close();
      }
      const runcRoot = join(options.runDir, 'runc');
      for (const c of runcList(runcRoot)) sh('runc', ['--root', runcRoot, 'delete', '--force', c.id]);
      for (const n of ls(options.netnsDir)) sh('umount', ['-l', join(options.netnsDir, n)]);
      // the engine made the netns dir a shared mount point (see linux-netns.ts)
      sh('umount', ['-l', options.netnsDir]);
      for (const line of readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .filter((l) => l.includes(dir))
        .reverse()) {
        sh('umount', ['-l', line.split(' ')[4]!]);
      }
      restoreHost(before, [bridge]);
      await rm(dir, { recursive: true, force: true });
      lease.release();
    },
  };
}

export function runcList(root: string): { id: string; status: string; annotations?: Record<string, string> }[] {
  if (!existsSync(root)) return [];
  return parseRuncList(sh('runc', ['--root', root, 'list', '--format', 'json']));
}

function parseRuncList(text: string): { id: string; status: string; annotations?: Record<string, string> }[] {
  const out = text.trim();
  return out ? ((JSON.parse(out) as { id: string; status: string; annotations?: Record<string, string> }[] | null) ?? []) : [];
}

/**
 * What the env's engines may have left: returns one line per leaked resource (empty means none).
 * @param ids every sandbox id the test ever saw (iptables rules mention them in portmap's comments)
 */
export function scopedLeaks(env: ScopedEnv, ids: Iterable<string>): string[] {
  const leaks: string[] = [];
  const o = env.options;
  const idList = [...ids];
  // every command below through one shell (runBatched): a fork of the test worker costs tens of ms of its CPU, and
  // the SIGKILL loop checks after each of its rounds
  const runcRoot = join(o.runDir, 'runc');
  const tables = ['iptables', 'ip6tables'].flatMap((table) => ['nat', 'filter', 'mangle'].map((t) => ({ table, t })));
  const cmds = [
    { file: 'ip', args: ['-o', 'link', 'show', 'master', env.bridge] },
    ...tables.map(({ table, t }) => ({ file: table, args: ['-t', t, '-S'] })),
    ...(existsSync(runcRoot) ? [{ file: 'runc', args: ['--root', runcRoot, 'list', '--format', 'json'] }] : []),
  ];
  const out = runBatched(cmds) ?? cmds.map((c) => sh(c.file, c.args));
  const [onBridge, ...rest] = out as [string, ...string[]];
  for (const n of ls(o.netnsDir)) leaks.push(`netns file ${join(o.netnsDir, n)}`);
  for (const l of onBridge.split('\n').filter(Boolean)) leaks.push(`veth on ${env.bridge}: ${l.split(':')[1]?.trim()}`);
  for (const d of ls(env.ipamDir)) {
    for (const f of ls(join(env.ipamDir, d)))
      if (!f.startsWith('last_reserved_ip') && f !== 'lock') leaks.push(`host-local reservation ${join(env.ipamDir, d, f)}`);
  }
  const subnet4 = `10.${env.subnet}.0.`;
  const subnet6 = `fd00:${env.subnet}:`;
  tables.forEach(({ table, t }, i) => {
    const rules = rest[i]!.split('\n');
    const mine = rules.filter((l) => l.includes(subnet4) || l.includes(subnet6) || idList.some((id) => l.includes(id)));
    for (const l of mine) leaks.push(`${table} -t ${t}: ${l}`);
  });
  for (const c of parseRuncList(rest[tables.length] ?? '')) leaks.push(`runc container ${c.id} (${c.status})`);
  for (const f of ls(join(o.cniCacheDir, 'results'))) leaks.push(`cni cache file ${f}`);
  for (const f of ls(join(o.stateDir, 'store'))) leaks.push(`state record ${f}`);
  for (const f of ls(join(o.stateDir, 'sandboxes'))) leaks.push(`sandbox dir ${join(o.stateDir, 'sandboxes', f)}`);
  for (const f of ls(join(o.runDir, 'sandboxes'))) leaks.push(`sandbox run dir ${join(o.runDir, 'sandboxes', f)}`);
  for (const l of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const mountPoint = l.split(' ')[4] ?? '';
    if (mountPoint.startsWith(env.dir) && mountPoint !== o.netnsDir) leaks.push(`mount ${mountPoint}`);
  }
  // and whatever the shared checker sees in the same scope (ifbs and their qdiscs, hashed chains, …)
  const shared = findLeftovers({
    bridge: env.bridge,
    networks: [env.bridge],
    subnets: [`10.${env.subnet}.0.0/24`, `fd00:${env.subnet}::/64`],
    ids: idList,
    ipamDir: env.ipamDir,
    cacheDir: o.cniCacheDir,
    stateDir: o.stateDir,
    runDir: o.runDir,
    netnsDir: o.netnsDir,
    ownsDirs: true,
  });
  for (const l of shared) leaks.push(`${l.kind}${l.table ? ` -t ${l.table}` : ''}: ${l.what}`);
  return [...new Set(leaks)];
}
