/**
 * ContainerConfig in CRI's own field names (snake_case, as in kubernetes/cri-api runtime.v1 and in crictl's
 * container-config files), enums as their proto numbers, and the container view models every front door shows.
 */
import { z } from 'zod';
import { NamespaceMode, SecurityProfileSchema, type PodSandboxConfigInput } from './config';
import type { SerializedError } from './errors';
import type { TraceEntry } from './trace';
import { lazySchema } from './lazy-schema';

const int64 = lazySchema(() => z.number().int());
const uint32 = lazySchema(() => z.number().int().min(0).max(4294967295));
const stringMap = lazySchema(() => z.record(z.string(), z.string()));

/** MountPropagation: PROPAGATION_PRIVATE=0, HOST_TO_CONTAINER=1, BIDIRECTIONAL=2 */
export const MountPropagation = { PROPAGATION_PRIVATE: 0, PROPAGATION_HOST_TO_CONTAINER: 1, PROPAGATION_BIDIRECTIONAL: 2 } as const;

function numberEnum(values: Record<string, number>, what: string) {
  const numbers = Object.values(values);
  return z.preprocess(
    (v) => (typeof v === 'string' && v.toUpperCase() in values ? values[v.toUpperCase()] : v),
    z
      .number()
      .int()
      .refine((n) => numbers.includes(n), {
        message: `${what} must be one of ${Object.entries(values)
          .map(([k, n]) => `${n} (${k})`)
          .join(', ')}`,
      }),
  );
}

export const ContainerMetadataSchema = lazySchema(() =>
  z.strictObject({
    name: z.string().default(''),
    attempt: uint32.default(0),
  }),
);

export const ImageSpecSchema = lazySchema(() =>
  z.strictObject({
    image: z.string().default(''),
    annotations: stringMap.default({}),
    user_specified_image: z.string().default(''),
    runtime_handler: z.string().default(''),
    image_ref: z.string().default(''),
  }),
);

export const KeyValueSchema = lazySchema(() => z.strictObject({ key: z.string().default(''), value: z.string().default('') }));

export const MountSchema = lazySchema(() =>
  z.strictObject({
    container_path: z.string().default(''),
    host_path: z.string().default(''),
    readonly: z.boolean().default(false),
    selinux_relabel: z.boolean().default(false),
    propagation: numberEnum(MountPropagation, 'propagation').default(0),
    recursive_read_only: z.boolean().default(false),
  }),
);

export const DeviceSchema = lazySchema(() =>
  z.strictObject({
    container_path: z.string().default(''),
    host_path: z.string().default(''),
    permissions: z.string().default(''),
  }),
);

export const LinuxContainerResourcesSchema = lazySchema(() =>
  z.strictObject({
    cpu_period: int64.default(0),
    cpu_quota: int64.default(0),
    cpu_shares: int64.default(0),
    memory_limit_in_bytes: int64.default(0),
    oom_score_adj: int64.default(0),
    cpuset_cpus: z.string().default(''),
    cpuset_mems: z.string().default(''),
    memory_swap_limit_in_bytes: int64.default(0),
    unified: stringMap.default({}),
  }),
);

export const CapabilitySchema = lazySchema(() =>
  z.strictObject({
    add_capabilities: z.array(z.string()).default([]),
    drop_capabilities: z.array(z.string()).default([]),
    add_ambient_capabilities: z.array(z.string()).default([]),
  }),
);

const ContainerNamespaceOptionSchema = lazySchema(() =>
  z.strictObject({
    network: numberEnum(NamespaceMode, 'namespace_options.network').default(0),
    pid: numberEnum(NamespaceMode, 'namespace_options.pid').default(0),
    ipc: numberEnum(NamespaceMode, 'namespace_options.ipc').default(0),
    target_id: z.string().default(''),
  }),
);

const Int64ValueSchema = lazySchema(() => z.strictObject({ value: int64 }));

export const LinuxContainerSecurityContextSchema = lazySchema(() =>
  z.strictObject({
    capabilities: CapabilitySchema.optional(),
    privileged: z.boolean().default(false),
    namespace_options: ContainerNamespaceOptionSchema.optional(),
    run_as_user: Int64ValueSchema.optional(),
    run_as_username: z.string().default(''),
    run_as_group: Int64ValueSchema.optional(),
    readonly_rootfs: z.boolean().default(false),
    supplemental_groups: z.array(int64).default([]),
    apparmor_profile: z.string().default(''),
    seccomp_profile_path: z.string().default(''),
    no_new_privs: z.boolean().default(false),
    masked_paths: z.array(z.string()).default([]),
    readonly_paths: z.array(z.string()).default([]),
    seccomp: SecurityProfileSchema.optional(),
    apparmor: SecurityProfileSchema.optional(),
  }),
);

export const LinuxContainerConfigSchema = lazySchema(() =>
  z.strictObject({
    resources: LinuxContainerResourcesSchema.optional(),
    security_context: LinuxContainerSecurityContextSchema.optional(),
  }),
);

export const ContainerConfigSchema = lazySchema(() =>
  z.strictObject({
    metadata: ContainerMetadataSchema,
    image: ImageSpecSchema.default({ image: '', annotations: {}, user_specified_image: '', runtime_handler: '', image_ref: '' }),
    command: z.array(z.string()).default([]),
    args: z.array(z.string()).default([]),
    working_dir: z.string().default(''),
    envs: z.array(KeyValueSchema).default([]),
    mounts: z.array(MountSchema).default([]),
    devices: z.array(DeviceSchema).default([]),
    labels: stringMap.default({}),
    annotations: stringMap.default({}),
    log_path: z.string().default(''),
    stdin: z.boolean().default(false),
    stdin_once: z.boolean().default(false),
    tty: z.boolean().default(false),
    linux: LinuxContainerConfigSchema.optional(),
    /** CRI Signal enum number (0 = runtime default); see SIGNAL_NAMES */
    stop_signal: z.number().int().min(0).default(0),
  }),
);

export type ContainerConfig = z.output<typeof ContainerConfigSchema>;
export type ContainerConfigInput = z.input<typeof ContainerConfigSchema>;
export type ContainerMetadata = z.output<typeof ContainerMetadataSchema>;
export type ContainerMount = z.output<typeof MountSchema>;
export type LinuxContainerResources = z.output<typeof LinuxContainerResourcesSchema>;
export type LinuxContainerResourcesInput = z.input<typeof LinuxContainerResourcesSchema>;

/** CRI state names. */
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export const CONTAINER_STATES: readonly ContainerState[] = [
  'CONTAINER_CREATED',
  'CONTAINER_RUNNING',
  'CONTAINER_EXITED',
  'CONTAINER_UNKNOWN',
];

export interface ContainerSummary {
  id: string;
  podSandboxId: string;
  /** `<name>_<podname>_<podns>_<poduid>_<attempt>` */
  name: string;
  metadata: ContainerMetadata;
  /** the image as the config named it */
  image: string;
  /** the resolved image id (`sha256:…`) */
  imageRef: string;
  state: ContainerState;
  createdAt: string;
  createdAtNs: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** why it exited: Completed (0), Error, OOMKilled; "" while not exited */
  reason: string;
  exitCode: number;
}

export interface ContainerStatusView extends ContainerSummary {
  startedAtNs: string;
  finishedAtNs: string;
  message: string;
  mounts: ContainerMount[];
  /** absolute host path of the CRI log ("" when the pod has no log_directory or the config no log_path) */
  logPath: string;
  pid?: number;
  /** the pid of the container's monitor, conmon (it holds the container's stdout/stderr) */
  monitorPid?: number;
  user: { uid: number; gid: number; supplementalGroups: number[] };
  resources?: LinuxContainerResources;
  /** what seccomp the process runs under: "unconfined", "runtime/default" or "localhost/<path>" */
  seccomp: string;
  apparmor: string;
  stopSignal: string;
  config: ContainerConfig;
  ociSpec?: unknown;
  lastError?: SerializedError;
  /** what CreateContainer and StartContainer did, step by step with their times (empty for a record of an older engine) */
  trace: TraceEntry[];
}

export interface ContainerFilter {
  id?: string;
  state?: ContainerState;
  podSandboxId?: string;
  labelSelector?: Record<string, string>;
}

export interface ContainerStats {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  timestampNs: string;
  /** cumulative CPU time in ns (cpuacct.usage) */
  cpuUsageCoreNs?: string;
  /** memory usage minus inactive file pages, as cadvisor and containerd report */
  memoryWorkingSetBytes?: string;
  memoryUsageBytes?: string;
  memoryRssBytes?: string;
  /** bytes the container's writable layer uses */
  writableLayerBytes?: string;
}

export interface ExecSyncResult {
  stdout: Uint8Array;
  stderr: Uint8Array;
  exitCode: number;
}

export interface CreateContainerRequest {
  podSandboxId: string;
  config: ContainerConfigInput;
  /** the pod's config as the caller has it (CRI sends it; the engine uses its own record) */
  sandboxConfig?: PodSandboxConfigInput;
}

export type ContainerEvent =
  | { type: 'container.added'; id: string; summary: ContainerSummary }
  | { type: 'container.changed'; id: string; summary: ContainerSummary }
  | { type: 'container.removed'; id: string; podSandboxId: string };

/** The container verbs every front door exposes (CRI RuntimeService's container RPCs). */
export interface ContainerApi {
  createContainer(req: CreateContainerRequest): Promise<{ id: string }>;
  startContainer(id: string): Promise<void>;
  /** timeout in seconds before SIGKILL; 0 kills at once */
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  containerStatus(id: string): Promise<ContainerStatusView>;
  listContainers(filter?: ContainerFilter): Promise<ContainerSummary[]>;
  /** timeout in seconds, 0 = none */
  execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>;
  updateContainerResources(id: string, resources: LinuxContainerResourcesInput): Promise<void>;
  containerStats(id: string): Promise<ContainerStats>;
  listContainerStats(filter?: Omit<ContainerFilter, 'state'>): Promise<ContainerStats[]>;
  reopenContainerLog(id: string): Promise<void>;
}

/** CRI's Signal enum (runtime.v1), index = enum number; 0 is RUNTIME_DEFAULT. */
export const SIGNAL_NAMES = [
  '',
  'SIGABRT',
  'SIGALRM',
  'SIGBUS',
  'SIGCHLD',
  'SIGCLD',
  'SIGCONT',
  'SIGFPE',
  'SIGHUP',
  'SIGILL',
  'SIGINT',
  'SIGIO',
  'SIGIOT',
  'SIGKILL',
  'SIGPIPE',
  'SIGPOLL',
  'SIGPROF',
  'SIGPWR',
  'SIGQUIT',
  'SIGSEGV',
  'SIGSTKFLT',
  'SIGSTOP',
  'SIGSYS',
  'SIGTERM',
  'SIGTRAP',
  'SIGTSTP',
  'SIGTTIN',
  'SIGTTOU',
  'SIGURG',
  'SIGUSR1',
  'SIGUSR2',
  'SIGVTALRM',
  'SIGWINCH',
  'SIGXCPU',
  'SIGXFSZ',
  'SIGRTMIN',
  'SIGRTMIN+1',
  'SIGRTMIN+2',
  'SIGRTMIN+3',
  'SIGRTMIN+4',
  'SIGRTMIN+5',
  'SIGRTMIN+6',
  'SIGRTMIN+7',
  'SIGRTMIN+8',
  'SIGRTMIN+9',
  'SIGRTMIN+10',
  'SIGRTMIN+11',
  'SIGRTMIN+12',
  'SIGRTMIN+13',
  'SIGRTMIN+14',
  'SIGRTMIN+15',
  'SIGRTMAX-14',
  'SIGRTMAX-13',
  'SIGRTMAX-12',
  'SIGRTMAX-11',
  'SIGRTMAX-10',
  'SIGRTMAX-9',
  'SIGRTMAX-8',
  'SIGRTMAX-7',
  'SIGRTMAX-6',
  'SIGRTMAX-5',
  'SIGRTMAX-4',
  'SIGRTMAX-3',
  'SIGRTMAX-2',
  'SIGRTMAX-1',
  'SIGRTMAX',
] as const;

/** containerd's makeContainerName: name_podname_podnamespace_poduid_attempt. */
export function makeContainerName(c: ContainerMetadata, pod: { name: string; namespace: string; uid: string }): string {
  return [c.name, pod.name, pod.namespace, pod.uid, String(c.attempt)].join('_');
}
