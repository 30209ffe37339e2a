/**
 * An app container's OCI config.json, built as containerd's CRI plugin builds it (internal/cri/server/container_create.go,
 * container_create_linux.go, internal/cri/opts/spec_linux_opts.go; docs/semantics.md#container-oci-spec), adapted to
 * this engine: cgroupfs driver, an oom score never below the engine's own, namespaces joined from the pause process.
 * Pure: everything it needs (resolved user, loaded seccomp profile, checked mounts) comes in through ContainerSpecInput.
 */
import { posix } from 'node:path';
import { NamespaceMode, isHostNetwork, type PodSandboxConfig } from '../../../shared/domain/config';
import type { ContainerConfig, ContainerMount } from '../../../shared/domain/container';
import { invalidArgument } from '../../../shared/domain/errors';
import type { ImageRuntimeConfig } from './oci-types';
import { DEFAULT_CAPABILITIES, DEFAULT_CGROUP_PARENT, MASKED_PATHS, OCI_VERSION, READONLY_PATHS } from './oci-spec';
import type { OciSeccomp } from './seccomp';

/** Every capability runc 1.1 knows (privileged containers and `ALL`). */
export const ALL_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_DAC_READ_SEARCH',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_LINUX_IMMUTABLE',
  'CAP_NET_BIND_SERVICE',
  'CAP_NET_BROADCAST',
  'CAP_NET_ADMIN',
  'CAP_NET_RAW',
  'CAP_IPC_LOCK',
  'CAP_IPC_OWNER',
  'CAP_SYS_MODULE',
  'CAP_SYS_RAWIO',
  'CAP_SYS_CHROOT',
  'CAP_SYS_PTRACE',
  'CAP_SYS_PACCT',
  'CAP_SYS_ADMIN',
  'CAP_SYS_BOOT',
  'CAP_SYS_NICE',
  'CAP_SYS_RESOURCE',
  'CAP_SYS_TIME',
  'CAP_SYS_TTY_CONFIG',
  'CAP_MKNOD',
  'CAP_LEASE',
  'CAP_AUDIT_WRITE',
  'CAP_AUDIT_CONTROL',
  'CAP_SETFCAP',
  'CAP_MAC_OVERRIDE',
  'CAP_MAC_ADMIN',
  'CAP_SYSLOG',
  'CAP_WAKE_ALARM',
  'CAP_BLOCK_SUSPEND',
  'CAP_AUDIT_READ',
  'CAP_PERFMON',
  'CAP_BPF',
  'CAP_CHECKPOINT_RESTORE',
];

export const CONTAINER_TYPE_ANNOTATION = 'io.kubernetes.cri.container-type';
const DEFAULT_PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ResolvedUser {
  uid: number;
  gid: number;
  additionalGids: number[];
}

export interface ContainerSpecInput {
  id: string;
  config: ContainerConfig;
  image: { name: string; config: ImageRuntimeConfig };
  sandbox: {
    id: string;
    config: PodSandboxConfig;
    /** the pause process, whose namespaces the container joins */
    pausePid: number;
    hostnamePath: string;
    hostsPath: string;
    resolvConfPath: string;
    shmPath: string;
  };
  rootfsPath: string;
  user: ResolvedUser;
  /** undefined ⇒ no seccomp */
  seccomp?: OciSeccomp;
  /** an AppArmor profile name, only when the kernel has AppArmor */
  apparmorProfile?: string;
  engineOomScoreAdj: number;
  /** capabilities the engine holds (privileged and `ALL` get these); default ALL_CAPABILITIES */
  heldCapabilities?: readonly string[];
}

/** `CapEff:\t000001fffeffffff` (a /proc/<pid>/status line) ⇒ capability names, by bit (CAP_CHOWN = 0 …). */
export function capabilitiesFromStatus(status: string): string[] | undefined {
  const m = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(status);
  if (!m) return undefined;
  const mask = BigInt(`0x${m[1]}`);
  return ALL_CAPABILITIES.filter((_, bit) => (mask >> BigInt(bit)) & 1n);
}

export interface ContainerOciSpec {
  ociVersion: string;
  process: {
    terminal: boolean;
    user: { uid: number; gid: number; additionalGids: number[] };
    args: string[];
    env: string[];
    cwd: string;
    capabilities: { bounding: string[]; effective: string[]; permitted: string[] };
    rlimits: { type: string; hard: number; soft: number }[];
    noNewPrivileges: boolean;
    oomScoreAdj: number;
    apparmorProfile?: string;
  };
  root: { path: string; readonly: boolean };
  mounts: { destination: string; type: string; source: string; options: string[] }[];
  annotations: Record<string, string>;
  linux: {
    resources: {
      devices: { allow: boolean; access: string }[];
      cpu?: { shares?: number; quota?: number; period?: number; cpus?: string; mems?: string };
      memory?: { limit?: number; swap?: number };
    };
    cgroupsPath: string;
    namespaces: { type: string; path?: string }[];
    maskedPaths: string[];
    readonlyPaths: string[];
    seccomp?: OciSeccomp;
    /** set only when a mount needs it (see rootfsPropagation) */
    rootfsPropagation?: 'rshared' | 'rslave';
  };
}

/**
 * containerd's WithMounts: a Bidirectional mount makes the container's root `rshared`, a HostToContainer one `rslave`
 * (unless already shared). runc's default root is rslave for the whole container, so without `rshared` a mount made
 * inside a Bidirectional volume never reaches the host (critest "mount with 'rshared' … vice versa").
 */
export function rootfsPropagation(mounts: readonly ContainerMount[]): 'rshared' | 'rslave' | undefined {
  if (mounts.some((m) => PROPAGATION[m.propagation] === 'rshared')) return 'rshared';
  if (mounts.some((m) => PROPAGATION[m.propagation] === 'rslave')) return 'rslave';
  return undefined;
}

/** Kubernetes' rules (containerd's WithProcessArgs): command replaces Entrypoint, args replace Cmd. */
export function processArgs(config: ContainerConfig, image: ImageRuntimeConfig): string[] {
  const entrypoint = config.command.length > 0 ? config.command : (image.Entrypoint ?? []);
  const cmd = config.command.length > 0 || config.args.length > 0 ? config.args : (image.Cmd ?? []);
  const args = [...entrypoint, ...cmd];
  if (args.length === 0) throw invalidArgument('no command specified: the config has no command/args and the image no Entrypoint/Cmd');
  return args;
}

/** Image Env, then the config's envs (a config key replaces the image's), as containerd's WithEnv. */
export function processEnv(config: ContainerConfig, image: ImageRuntimeConfig, hostname: string): string[] {
  const out = new Map<string, string>();
  const put = (kv: string) => {
    const i = kv.indexOf('=');
    out.set(i < 0 ? kv : kv.slice(0, i), kv);
  };
  // containerd adds HOSTNAME first so that both the image and the config may override it
  put(`HOSTNAME=${hostname}`);
  for (const kv of image.Env ?? [DEFAULT_PATH_ENV]) put(kv);
  for (const { key, value } of config.envs) put(`${key}=${value}`);
  return [...out.values()];
}

function normalizeCap(c: string): string {
  const up = c.toUpperCase();
  return up === 'ALL' ? 'ALL' : up.startsWith('CAP_') ? up : `CAP_${up}`;
}

/**
 * containerd's WithCapabilities: drop ALL first, then add (ALL adds everything), then drop the named ones.
 * "Everything" (privileged, add ALL) is what the engine itself holds, not every capability the kernel knows: containerd
 * takes it from its own process (pkg/cap Current(): CapEff of /proc/self/status, read once in NewCRIService; oci
 * WithAllCurrentCapabilities for privileged), because runc cannot grant a capability its caller lacks ("unable to
 * apply caps: operation not permitted"). `held` defaults to ALL_CAPABILITIES for callers that do not know.
 */
export function capabilities(config: ContainerConfig, held: readonly string[] = ALL_CAPABILITIES): string[] {
  const sc = config.linux?.security_context;
  if (sc?.privileged) return [...held];
  const add = (sc?.capabilities?.add_capabilities ?? []).map(normalizeCap);
  const drop = (sc?.capabilities?.drop_capabilities ?? []).map(normalizeCap);
  for (const c of [...add, ...drop])
    if (c !== 'ALL' && !ALL_CAPABILITIES.includes(c)) throw invalidArgument(`unknown capability ${JSON.stringify(c)}`);
  let caps = drop.includes('ALL') ? [] : [...DEFAULT_CAPABILITIES];
  if (add.includes('ALL')) caps = [...held];
  for (const c of add) if (c !== 'ALL' && !caps.includes(c)) caps.push(c);
  return caps.filter((c) => !drop.includes(c));
}

const PROPAGATION = ['rprivate', 'rslave', 'rshared'];

function userMount(m: ContainerMount): ContainerOciSpec['mounts'][number] {
  if (!posix.isAbsolute(m.container_path))
    throw invalidArgument(`mount container_path ${JSON.stringify(m.container_path)} must be absolute`);
  return {
    destination: m.container_path,
    type: 'bind',
    source: m.host_path,
    options: ['rbind', PROPAGATION[m.propagation] ?? 'rprivate', m.readonly ? 'ro' : 'rw'],
  };
}

function namespaces(input: ContainerSpecInput): ContainerOciSpec['linux']['namespaces'] {
  const pod = input.sandbox.config;
  const podNs = pod.linux?.security_context?.namespace_options;
  const own = input.config.linux?.security_context?.namespace_options;
  const pause = (ns: string) => `/proc/${input.sandbox.pausePid}/ns/${ns}`;
  const list: ContainerOciSpec['linux']['namespaces'] = [{ type: 'mount' }];
  if (!isHostNetwork(pod)) {
    list.push({ type: 'network', path: pause('net') });
    list.push({ type: 'uts', path: pause('uts') });
  }
  if (podNs?.ipc !== NamespaceMode.NODE) list.push({ type: 'ipc', path: pause('ipc') });
  // PID: the container's own namespace_options decide (kubelet copies the pod's): POD joins the pause's, CONTAINER
  // gets a fresh one, NODE the host's; TARGET is for ephemeral containers, which need the streaming issue.
  const pid = own?.pid ?? podNs?.pid ?? NamespaceMode.POD;
  if (pid === NamespaceMode.TARGET) throw invalidArgument('namespace_options.pid TARGET is not supported');
  if (pid === NamespaceMode.POD) {
    if (podNs?.pid === NamespaceMode.NODE) throw invalidArgument('namespace_options.pid POD: the pod uses the host PID namespace');
    list.push({ type: 'pid', path: pause('pid') });
  } else if (pid === NamespaceMode.CONTAINER) {
    list.push({ type: 'pid' });
  }
  return list;
}

export function buildContainerSpec(input: ContainerSpecInput): ContainerOciSpec {
  const { config, sandbox, image } = input;
  const sc = config.linux?.security_context;
  const podSc = sandbox.config.linux?.security_context;
  const privileged = sc?.privileged ?? false;
  // containerd: "no privileged container allowed in sandbox"
  if (privileged && !podSc?.privileged) throw invalidArgument('no privileged container allowed in sandbox: the pod is not privileged');
  if (config.devices.length > 0) throw invalidArgument('devices: device passthrough is not supported');
  const readonlyRoot = sc?.readonly_rootfs ?? false;
  const caps = capabilities(config, input.heldCapabilities);
  const resources = config.linux?.resources;
  const hostIpc = podSc?.namespace_options?.ipc === NamespaceMode.NODE;

  const userMounts = config.mounts.map(userMount);
  const taken = new Set(userMounts.map((m) => m.destination));
  // /etc/hostname, /etc/hosts, /etc/resolv.conf: read-only when the rootfs is (containerd), else writable
  const fileOpts = ['rbind', 'rprivate', readonlyRoot ? 'ro' : 'rw'];
  const podMounts: ContainerOciSpec['mounts'] = [];
  if (!taken.has('/etc/hostname'))
    podMounts.push({ destination: '/etc/hostname', type: 'bind', source: sandbox.hostnamePath, options: [...fileOpts] });
  if (!taken.has('/etc/hosts'))
    podMounts.push({ destination: '/etc/hosts', type: 'bind', source: sandbox.hostsPath, options: [...fileOpts] });
  if (!taken.has('/etc/resolv.conf'))
    podMounts.push({ destination: '/etc/resolv.conf', type: 'bind', source: sandbox.resolvConfPath, options: [...fileOpts] });
  if (!taken.has('/dev/shm'))
    podMounts.push({
      destination: '/dev/shm',
      type: 'bind',
      source: hostIpc ? '/dev/shm' : sandbox.shmPath,
      options: ['rbind', 'rprivate', 'rw'],
    });

  const baseMounts: ContainerOciSpec['mounts'] = [
    { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
    {
      destination: '/dev/pts',
      type: 'devpts',
      source: 'devpts',
      options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
    },
    { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', privileged ? 'rw' : 'ro'] },
  ].filter((m) => !taken.has(m.destination));

  const cpu: NonNullable<ContainerOciSpec['linux']['resources']['cpu']> = {};
  if (resources?.cpu_shares) cpu.shares = resources.cpu_shares;
  if (resources?.cpu_quota) cpu.quota = resources.cpu_quota;
  if (resources?.cpu_period) cpu.period = resources.cpu_period;
  if (resources?.cpuset_cpus) cpu.cpus = resources.cpuset_cpus;
  if (resources?.cpuset_mems) cpu.mems = resources.cpuset_mems;
  const memory: NonNullable<ContainerOciSpec['linux']['resources']['memory']> = {};
  if (resources?.memory_limit_in_bytes) memory.limit = resources.memory_limit_in_bytes;
  if (resources?.memory_swap_limit_in_bytes) memory.swap = resources.memory_swap_limit_in_bytes;

  const pod = sandbox.config.metadata;
  return {
    ociVersion: OCI_VERSION,
    process: {
      // a terminal container is reached through Attach (conmon holds the pty's master: runtime/conmon.ts)
      terminal: config.tty,
      user: { ...input.user, additionalGids: [...input.user.additionalGids] },
      args: processArgs(config, image.config),
      env: processEnv(config, image.config, sandbox.config.hostname),
      cwd: config.working_dir || image.config.WorkingDir || '/',
      capabilities: { bounding: caps, effective: [...caps], permitted: [...caps] },
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1024, soft: 1024 }],
      noNewPrivileges: sc?.no_new_privs ?? false,
      // restrict_oom_score_adj: never below the engine's own (lowering needs CAP_SYS_RESOURCE)
      oomScoreAdj: Math.max(resources?.oom_score_adj ?? 0, input.engineOomScoreAdj),
      ...(input.apparmorProfile && !privileged && { apparmorProfile: input.apparmorProfile }),
    },
    root: { path: input.rootfsPath, readonly: readonlyRoot },
    mounts: [...baseMounts, ...podMounts, ...userMounts],
    annotations: {
      [CONTAINER_TYPE_ANNOTATION]: 'container',
      'io.kubernetes.cri.container-name': config.metadata.name,
      'io.kubernetes.cri.sandbox-id': sandbox.id,
      'io.kubernetes.cri.sandbox-name': pod.name,
      'io.kubernetes.cri.sandbox-namespace': pod.namespace,
      'io.kubernetes.cri.sandbox-uid': pod.uid,
      'io.kubernetes.cri.image-name': image.name,
    },
    linux: {
      resources: {
        devices: [{ allow: privileged, access: 'rwm' }],
        ...(Object.keys(cpu).length > 0 && { cpu }),
        ...(Object.keys(memory).length > 0 && { memory }),
      },
      cgroupsPath: posix.join(sandbox.config.linux?.cgroup_parent || DEFAULT_CGROUP_PARENT, input.id),
      namespaces: namespaces(input),
      // a privileged container sees everything; otherwise the config's lists replace the defaults when given
      maskedPaths: privileged ? [] : sc?.masked_paths.length ? [...sc.masked_paths] : [...MASKED_PATHS],
      readonlyPaths: privileged ? [] : sc?.readonly_paths.length ? [...sc.readonly_paths] : [...READONLY_PATHS],
      ...(input.seccomp && !privileged && { seccomp: input.seccomp }),
      ...(rootfsPropagation(config.mounts) && { rootfsPropagation: rootfsPropagation(config.mounts) }),
    },
  };
}
