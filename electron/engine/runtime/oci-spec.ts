/**
 * The pause container's OCI config.json, built the way containerd's CRI plugin builds it (its defaults, then the
 * sandbox modifications: docs/semantics.md#pause-oci-spec), adapted to this engine: cgroupfs driver, an oom score never below the engine's own
 * (no CAP_SYS_RESOURCE), no rlimits; seccomp as the pod asks (runtime/seccomp.ts). Pure: everything it needs comes in through PauseSpecInput.
 * Settings that runc would reject are rejected here first, as InvalidArgument, with the reason.
 */
import { posix } from 'node:path';
import { NamespaceMode, isHostNetwork, type PodSandboxConfig } from '../../../shared/domain/config';
import { invalidArgument } from '../../../shared/domain/errors';
import type { OciMount, OciNamespace, OciSpec } from './oci-types';
import { PAUSE_ENTRYPOINT } from './pause-rootfs';
import { checkSeccompRequest, type SeccompChoice } from './seccomp';
import { checkSysctl, type PrivateNamespaces } from './sysctl-rules';

export interface PauseSpecInput {
  /** sandbox id (also the runc container id) */
  id: string;
  config: PodSandboxConfig;
  /** the pinned network namespace; required unless the pod uses the host network */
  netnsPath?: string;
  /** absolute path of the shared pause rootfs (from PauseRuntime.ensureRootfs) */
  rootfsPath: string;
  /** `<stateDir>/sandboxes/<id>/resolv.conf` */
  resolvConfPath: string;
  /** `<runDir>/sandboxes/<id>/shm`; unused for host IPC, which binds the host's /dev/shm */
  shmPath: string;
  /** the engine's own /proc/self/oom_score_adj (see readEngineOomScoreAdj) */
  engineOomScoreAdj: number;
  /** value of the io.kubernetes.cri.podsandbox.image-name annotation */
  imageName?: string;
  /** the seccomp profile loaded for the pod (runtime/seccomp.ts loadSeccomp); absent ⇒ only validated */
  seccomp?: SeccompChoice;
  /** where relative localhost seccomp refs live; default: no relative refs */
  seccompProfileRoot?: string;
}

export const OCI_VERSION = '1.0.2';
export const PAUSE_IMAGE_NAME = 'podscope.local/pause:busybox';
/** cgroupfs parent when the pod names none (containerd uses its namespace, `/k8s.io`) */
export const DEFAULT_CGROUP_PARENT = '/podscope';
/** containerd's sandbox score: the pause process should be the last thing the OOM killer picks */
export const SANDBOX_OOM_SCORE_ADJ = -998;
/** the user the pause image declares (`USER 65535:65535`) */
const PAUSE_IMAGE_USER = 65535;
const MAX_ID = 4294967295;

export const DEFAULT_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

export const MASKED_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
  '/proc/scsi',
];

export const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** Added for pods with their own network namespace unless the pod sets them (containerd's enable_unprivileged_* defaults). */
export const UNPRIVILEGED_SYSCTLS: Record<string, string> = {
  'net.ipv4.ip_unprivileged_port_start': '0',
  'net.ipv4.ping_group_range': '0 2147483647',
};

const PAUSE_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];
const SANDBOX_BIND_OPTIONS = ['rbind', 'ro', 'nosuid', 'nodev', 'noexec'];

/** containerd's default mounts minus `/run` and the default `/dev/shm` tmpfs, which the sandbox replaces by a bind. */
function baseMounts(privileged: boolean): OciMount[] {
  return [
    { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
    {
      destination: '/dev/pts',
      type: 'devpts',
      source: 'devpts',
      options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
    },
    { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
    // A privileged sandbox gets a writable /sys.
    { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', privileged ? 'rw' : 'ro'] },
  ];
}

function namespaceModes(config: PodSandboxConfig) {
  const ns = config.linux?.security_context?.namespace_options;
  return { hostNetwork: isHostNetwork(config), hostPid: ns?.pid === NamespaceMode.NODE, hostIpc: ns?.ipc === NamespaceMode.NODE };
}

function checkId(what: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_ID)
    throw invalidArgument(`${what} must be between 0 and ${MAX_ID}, got ${value}`);
  return value;
}

/** run_as_user[:run_as_group], else the pause image's 65535:65535; the gid leads the additional gids. */
function processUser(config: PodSandboxConfig): OciSpec['process']['user'] {
  const sc = config.linux?.security_context;
  let uid = PAUSE_IMAGE_USER;
  let gid = PAUSE_IMAGE_USER;
  if (sc?.run_as_user) {
    uid = checkId('run_as_user', sc.run_as_user.value);
    // A bare numeric user has no /etc/passwd entry in the pause rootfs to take a group from, so it gets group 0.
    gid = sc.run_as_group ? checkId('run_as_group', sc.run_as_group.value) : 0;
  } else if (sc?.run_as_group) {
    throw invalidArgument(`user group "${sc.run_as_group.value}" is specified without user`);
  }
  const supplemental = (sc?.supplemental_groups ?? []).map((g) => checkId('supplemental_groups', g));
  return { uid, gid, additionalGids: [...new Set([gid, ...supplemental])] };
}

function namespaces(hostNetwork: boolean, hostPid: boolean, hostIpc: boolean, netnsPath: string | undefined): OciNamespace[] {
  const list: OciNamespace[] = [];
  if (!hostPid) list.push({ type: 'pid' });
  if (!hostIpc) list.push({ type: 'ipc' });
  // The host network comes with the host's UTS namespace (hostname) too.
  if (!hostNetwork) list.push({ type: 'uts' });
  list.push({ type: 'mount' });
  if (!hostNetwork) {
    if (!netnsPath) throw invalidArgument('a pod with its own network namespace needs netnsPath');
    list.push({ type: 'network', path: netnsPath });
  }
  return list;
}

function sysctls(config: PodSandboxConfig, own: PrivateNamespaces): Record<string, string> {
  const user = config.linux?.sysctls ?? {};
  for (const [name, value] of Object.entries(user)) checkSysctl(name, own, value);
  return own.network ? { ...UNPRIVILEGED_SYSCTLS, ...user } : { ...user };
}

/**
 * cgroupfs driver: the path is used as given under each controller's root. A systemd-style parent (`/test.slice`)
 * is therefore not rewritten to runc's `slice:prefix:name` form; it simply becomes a directory of that name.
 */
function cgroupsPath(config: PodSandboxConfig, id: string): string {
  return posix.join(config.linux?.cgroup_parent || DEFAULT_CGROUP_PARENT, id);
}

function criAnnotations(input: PauseSpecInput): Record<string, string> {
  const { config, id } = input;
  return {
    'io.kubernetes.cri.container-type': 'sandbox',
    'io.kubernetes.cri.sandbox-id': id,
    'io.kubernetes.cri.sandbox-namespace': config.metadata.namespace,
    'io.kubernetes.cri.sandbox-uid': config.metadata.uid,
    'io.kubernetes.cri.sandbox-name': config.metadata.name,
    'io.kubernetes.cri.sandbox-log-directory': config.log_directory,
    'io.kubernetes.cri.podsandbox.image-name': input.imageName ?? PAUSE_IMAGE_NAME,
  };
}

export function buildPauseSpec(input: PauseSpecInput): OciSpec {
  const { config, id } = input;
  const { hostNetwork, hostPid, hostIpc } = namespaceModes(config);
  if (hostNetwork && config.hostname) {
    throw invalidArgument(
      `hostname "${config.hostname}" cannot be set for a host-network pod: it shares the host's UTS namespace (runc: unable to set hostname without a private UTS namespace)`,
    );
  }
  // sethostname(2) takes at most 64 bytes; past that runc fails with a bare EINVAL after the network is set up
  if (Buffer.byteLength(config.hostname) > 64)
    throw invalidArgument(`hostname "${config.hostname}" is longer than 64 bytes, the kernel's limit`);
  const sc = config.linux?.security_context;
  // refused before anything is acquired: an unknown seccomp_profile_path or a localhost ref outside the root
  checkSeccompRequest({
    profile: sc?.seccomp,
    legacyPath: sc?.seccomp_profile_path ?? '',
    profileRoot: input.seccompProfileRoot ?? '/nonexistent-seccomp-root',
  });
  const privileged = sc?.privileged ?? false;
  const caps = [...DEFAULT_CAPABILITIES];
  return {
    ociVersion: OCI_VERSION,
    process: {
      terminal: false,
      user: processUser(config),
      args: [PAUSE_ENTRYPOINT],
      env: [...PAUSE_ENV],
      cwd: '/',
      capabilities: { bounding: caps, effective: [...caps], permitted: [...caps] },
      noNewPrivileges: true,
      // Never below the engine's own score: lowering it needs CAP_SYS_RESOURCE, which this engine may lack.
      oomScoreAdj: Math.max(SANDBOX_OOM_SCORE_ADJ, input.engineOomScoreAdj),
    },
    root: { path: input.rootfsPath, readonly: true },
    hostname: config.hostname,
    mounts: [
      ...baseMounts(privileged),
      { destination: '/dev/shm', type: 'bind', source: hostIpc ? '/dev/shm' : input.shmPath, options: [...SANDBOX_BIND_OPTIONS] },
      { destination: '/etc/resolv.conf', type: 'bind', source: input.resolvConfPath, options: [...SANDBOX_BIND_OPTIONS] },
    ],
    annotations: criAnnotations(input),
    linux: {
      sysctl: sysctls(config, { network: !hostNetwork, ipc: !hostIpc, uts: !hostNetwork }),
      resources: { devices: [{ allow: false, access: 'rwm' }], cpu: { shares: 2 } },
      cgroupsPath: cgroupsPath(config, id),
      namespaces: namespaces(hostNetwork, hostPid, hostIpc, input.netnsPath),
      maskedPaths: [...MASKED_PATHS],
      readonlyPaths: [...READONLY_PATHS],
      ...(input.seccomp?.spec && !privileged && { seccomp: input.seccomp.spec }),
    },
  };
}
