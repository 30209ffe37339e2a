/**
 * Starts a containerd of the test's own (Debian's 1.6.20): own config.toml, root, state, socket and CNI conf dir
 * under a temp dir, CRI with restrict_oom_score_adj (this machine has no CAP_SYS_RESOURCE) and a busybox pause
 * image built and imported locally. stop() removes every sandbox through CRI, kills only the containerd it started
 * (by pid), and removes what is left: netns, bridge, ip(6)tables chains it added, CNI cache files, dirs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCriEndpointApi, type CriEndpointApi } from '../electron/cri/client';
import { PAUSE_IMAGE_REF, buildPauseImageTar } from './pause-image';
import { tempDir } from './temp-dir';
import { leaseHost } from './allocator';
import { restoreHost, snapshotHost } from './host-cleanup';

export interface ContainerdSpec {
  /** bridge name, e.g. psc-ctd0; default the lease's (see `subnet`) */
  bridge?: string;
  /** 10.<n>.0.0/24 and fd00:<n>::/64; default a lease of the test kit's allocator (its octet, bridge name) */
  subnet?: number;
  /** an IPv4-only /24 given in full (e.g. 10.88.254.0/24) instead of the subnet number's two ranges */
  ipv4Cidr?: string;
  /** other dual-stack pod ranges instead (a test given e.g. 10.88.248.0/24 by its task) */
  ranges?: { ipv4: string; ipv6: string };
  /** registry host ⇒ http(s) origin to pull its images from, names kept (hosts.toml `server` under config_path) */
  registryMirrors?: Record<string, string>;
  /** temp dir prefix (default podscope-ctd-) */
  tempPrefix?: string;
  /** run it as a kind-shaped node: inside a network namespace (and more), see NodePlacement */
  node?: NodePlacement;
}

/**
 * Where a node's containerd lives. It always enters the node's netns with nsenter (not `ip netns exec`, which remounts
 * /sys and hides the cgroup mounts from runc) and gets a UTS namespace with the node's hostname.
 */
export interface NodePlacement {
  /** the node's network namespace, e.g. /var/run/netns/<name> */
  netnsPath: string;
  hostname: string;
  /**
   * its own mount namespace (as a kind node container): its socket and /run (the pods' netns files under
   * /run/netns, /run/containerd) are tmpfs only it sees; from the host the socket is /proc/<pid>/root/<path>
   */
  privateMount?: boolean;
  /** also its own pid namespace (needs privateMount: /proc is remounted inside) */
  ownPid?: boolean;
}

export interface ContainerdFixture {
  dir: string;
  /** the bridge (and CNI network) name and the pod subnets */
  bridge: string;
  subnet4: string;
  subnet6?: string;
  /** the socket as the host reaches it (through /proc/<pid>/root when the node has its own mount namespace) */
  socketPath: string;
  /** the socket's path as containerd itself sees it */
  innerSocketPath: string;
  confDir: string;
  /** containerd's pid (in the host's pid namespace) */
  pid: number;
  api: CriEndpointApi;
  /** the conflist written to the conf dir (the same one the Podscope engine is given for comparisons) */
  conflist: Record<string, unknown>;
  stop(): Promise<void>;
}

const sh = (file: string, args: string[]) => {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return '';
  }
};

type ResolvedSpec = ContainerdSpec & { bridge: string; subnet: number };

function ranges(spec: ResolvedSpec): string[] {
  return spec.ranges
    ? [spec.ranges.ipv4, spec.ranges.ipv6]
    : spec.ipv4Cidr
      ? [spec.ipv4Cidr]
      : [`10.${spec.subnet}.0.0/24`, `fd00:${spec.subnet}::/64`];
}

export function testConflist(spec: ResolvedSpec, ipamDir: string): Record<string, unknown> {
  return {
    cniVersion: '1.0.0',
    name: spec.bridge,
    plugins: [
      {
        type: 'bridge',
        bridge: spec.bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDir,
          ranges: ranges(spec).map((subnet) => [{ subnet }]),
          // a node's pods reach other nodes' pod subnets through the node's routes, as kindnet's pods do (both families)
          routes: spec.node
            ? [{ dst: '0.0.0.0/0' }, { dst: '::/0' }]
            : [{ dst: spec.ranges?.ipv4 ?? spec.ipv4Cidr ?? `10.${spec.subnet}.0.0/16` }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  };
}

function configToml(d: string, socket: string, confDir: string, registryConfigPath?: string): string {
  return `version = 2
root = "${d}/root"
state = "${d}/state"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "${d}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE_REF}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${confDir}"
    max_conf_num = 1
${registryConfigPath ? `  [plugins."io.containerd.grpc.v1.cri".registry]\n    config_path = "${registryConfigPath}"\n` : ''}`;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, isDead: () => string | undefined): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    const dead = isDead();
    if (dead) throw new Error(`${what}: ${dead}`);
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what}: timed out (${(last as Error)?.message ?? 'no answer'})`);
}

export async function startContainerd(given: ContainerdSpec): Promise<ContainerdFixture> {
  const lease = given.subnet === undefined && !given.ranges && !given.ipv4Cidr ? leaseHost('containerd') : undefined;
  const spec: ResolvedSpec = {
    ...given,
    subnet: given.subnet ?? lease?.octet ?? 0,
    bridge: given.bridge ?? lease?.name('ctd') ?? 'psc-ctd',
  };
  const tmp = tempDir(spec.tempPrefix ?? 'podscope-ctd-');
  const d = tmp.dir;
  if (spec.node?.ownPid && !spec.node.privateMount) throw new Error('containerd fixture: ownPid needs privateMount');
  if (spec.node?.privateMount) mkdirSync(join(d, 'hidden'));
  // a private node's socket lives on a tmpfs only its mount namespace sees
  const innerSocketPath = spec.node?.privateMount ? join(d, 'hidden', 'containerd.sock') : join(d, 'containerd.sock');
  const confDir = join(d, 'net.d');
  const ipamDir = join(d, 'ipam');
  mkdirSync(confDir);
  const conflist = testConflist(spec, ipamDir);
  writeFileSync(join(confDir, `10-${spec.bridge}.conflist`), JSON.stringify(conflist, null, 2));
  let registryConfigPath: string | undefined;
  if (spec.registryMirrors) {
    registryConfigPath = join(d, 'certs.d');
    for (const [host, origin] of Object.entries(spec.registryMirrors)) {
      mkdirSync(join(registryConfigPath, host), { recursive: true });
      writeFileSync(
        join(registryConfigPath, host, 'hosts.toml'),
        `server = "${origin}"\n\n[host."${origin}"]\n  capabilities = ["pull", "resolve"]\n`,
      );
    }
  }
  writeFileSync(join(d, 'config.toml'), configToml(d, innerSocketPath, confDir, registryConfigPath));

  // what exists before, so cleanup removes only what this containerd added
  const before = { host: snapshotHost(), netns: new Set(existsSync('/var/run/netns') ? readdirSync('/var/run/netns') : []) };
  const hostDirs = [
    '/var/lib/cni/results',
    '/var/lib/cni',
    '/run/containerd/s',
    '/run/containerd/runc/k8s.io',
    '/run/containerd/runc',
    '/run/containerd',
  ].filter((p) => !existsSync(p));

  const logFd = openSync(join(d, 'containerd.log'), 'a');
  const [file, args] = spec.node
    ? nodeCommand(spec.node, join(d, 'config.toml'), join(d, 'hidden'))
    : ['/usr/bin/containerd', ['--config', join(d, 'config.toml')]];
  const child: ChildProcess = spawn(file, args, { stdio: ['ignore', logFd, logFd], detached: false });
  const log = () => (existsSync(join(d, 'containerd.log')) ? readFileSync(join(d, 'containerd.log'), 'utf8') : '');
  const isDead = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `containerd exited (${child.exitCode ?? child.signalCode}); log tail:\n${log().slice(-3000)}`
      : undefined;
  let pid = child.pid!;
  try {
    // with its own pid namespace, containerd is the child of `unshare --fork`
    if (spec.node?.ownPid) pid = await waitFor('containerd in its pid namespace', async () => childOf(child.pid!), 10_000, isDead);
  } catch (e) {
    child.kill('SIGKILL');
    tmp.cleanup();
    lease?.release();
    throw e;
  }
  const socketPath = spec.node?.privateMount ? `/proc/${pid}/root${innerSocketPath}` : innerSocketPath;
  const api = createCriEndpointApi(socketPath, { connectTimeoutMs: 1000, callTimeoutMs: 120_000 });

  const sandboxIds = new Set<string>();
  let stopped = false;
  const fixture: ContainerdFixture = {
    dir: d,
    bridge: spec.bridge,
    subnet4: ranges(spec)[0]!,
    subnet6: ranges(spec)[1],
    socketPath,
    innerSocketPath,
    confDir,
    pid,
    api,
    conflist,
    async stop() {
      if (stopped) return;
      stopped = true;
      // 1. remove every sandbox through CRI so CNI DEL runs (portmap chains, bandwidth ifb, IPAM, cache files)
      try {
        for (const s of await api.list()) {
          sandboxIds.add(s.id);
          await api.remove(s.id).catch((e: unknown) => console.error(`containerd fixture: remove ${s.id}: ${(e as Error).message}`));
        }
      } catch (e) {
        if (!isDead()) console.error(`containerd fixture: list: ${(e as Error).message}`);
      }
      api.close();
      // 2. stop only our containerd, by pid; then any shim it left (their parent is gone, they carry our socket in argv)
      if (!isDead()) {
        // signal containerd itself: under `unshare --fork` the child is unshare, which exits once its pid 1 does
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* gone */
        }
        const exited = await new Promise<boolean>((r) => {
          const t = setTimeout(() => r(false), 10_000);
          child.once('exit', () => {
            clearTimeout(t);
            r(true);
          });
        });
        if (!exited && child.pid) process.kill(child.pid, 'SIGKILL');
      }
      for (const shim of shimPids(innerSocketPath)) {
        try {
          process.kill(shim, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      // 3. host leftovers
      for (const m of sh('findmnt', ['-rn', '-o', 'TARGET'])
        .split('\n')
        .filter((t) => t.startsWith(d))
        .reverse())
        sh('umount', ['-l', m]);
      for (const ns of existsSync('/var/run/netns') ? readdirSync('/var/run/netns') : []) {
        if (!before.netns.has(ns) && ns.startsWith('cni-') && netnsIsOurs(ns, spec)) sh('ip', ['netns', 'delete', ns]);
      }
      sh('ip', ['link', 'del', spec.bridge]);
      restoreHost(before.host, []);
      for (const id of sandboxIds)
        for (const f of existsSync('/var/lib/cni/results') ? readdirSync('/var/lib/cni/results') : [])
          if (f.includes(id)) rmSync(join('/var/lib/cni/results', f), { force: true });
      for (const p of hostDirs) {
        try {
          rmdirSync(p);
        } catch {
          /* not empty: someone else uses it */
        }
      }
      tmp.cleanup();
      lease?.release();
    },
  };
  try {
    await waitFor(
      'containerd CRI',
      async () => (await api.runtimeConditions()).find((c) => c.type === 'NetworkReady' && c.status),
      30_000,
      isDead,
    );
    const tar = buildPauseImageTar(d);
    execFileSync('/usr/bin/ctr', ['-a', socketPath, '-n', 'k8s.io', 'images', 'import', tar], { stdio: ['ignore', 'pipe', 'pipe'] });
    // remember ids as they appear so stop() can clean cache files even if containerd dies
    const origRun = api.run.bind(api);
    api.run = async (req) => {
      const r = await origRun(req);
      sandboxIds.add(r.id);
      return r;
    };
    return fixture;
  } catch (e) {
    await fixture.stop();
    throw e;
  }
}

/**
 * The command that starts containerd as a node: into the node's netns (nsenter, which execs), then `unshare` (execs,
 * so containerd keeps the spawned pid unless a pid namespace needs a fork), then a shell that sets the hostname and,
 * for a private mount namespace, covers the paths a kind node keeps to itself with tmpfs before exec'ing containerd.
 */
function nodeCommand(node: NodePlacement, config: string, hidden: string): [string, string[]] {
  const q = (x: string) => `'${x.replace(/'/g, `'\\''`)}'`;
  const lines = ['set -e', `hostname ${q(node.hostname)}`];
  // /run as a whole, not /run/containerd or /run/netns: the host's own containerd fixtures rmdir those when they are
  // empty on the host, and removing a directory detaches the mounts on it in every other mount namespace
  if (node.privateMount) for (const dir of [hidden, '/run']) lines.push(`mount -t tmpfs -o mode=0755 podscope-node ${q(dir)}`);
  lines.push(`exec /usr/bin/containerd --config ${q(config)}`);
  const unshare = ['--uts'];
  if (node.privateMount) unshare.push('--mount', '--propagation', 'private');
  if (node.ownPid) unshare.push('--pid', '--fork', '--mount-proc', '--kill-child');
  return ['/usr/bin/nsenter', [`--net=${node.netnsPath}`, '--', '/usr/bin/unshare', ...unshare, '--', '/bin/sh', '-c', lines.join('\n')]];
}

/** the first child of a process, from /proc/<pid>/task/<pid>/children */
function childOf(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    if (!first) return undefined;
    // the shell execs containerd: wait until the child is containerd, not the shell still mounting
    return readFileSync(`/proc/${first}/comm`, 'utf8').trim() === 'containerd' ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/** containerd-shim-runc-v2 processes started for our socket (argv contains "-address <socket>"). */
function shimPids(socketPath: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('containerd-shim-runc-v2') && argv.includes(socketPath)) out.push(Number(p));
    } catch {
      /* exited */
    }
  }
  return out;
}

/** A leftover netns is ours if an address of our subnet lives in it. */
function netnsIsOurs(ns: string, spec: ResolvedSpec): boolean {
  const cidr = spec.ranges?.ipv4 ?? spec.ipv4Cidr;
  const prefix = cidr ? cidr.split('.').slice(0, 3).join('.') + '.' : `10.${spec.subnet}.0.`;
  return sh('ip', ['-n', ns, '-o', 'addr']).includes(prefix);
}
