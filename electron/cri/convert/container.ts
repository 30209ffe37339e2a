/**
 * Containers: CRI wire messages (ts-proto, camelCase, int64 as strings) ⇄ Podscope's domain (CRI snake_case names,
 * numeric enums, shared/domain/container.ts). Used by the server (wire ⇒ engine ⇒ wire) and the client.
 */
import type {
  ContainerConfig,
  ContainerConfigInput,
  ContainerState,
  ContainerStats,
  ContainerStatusView,
  ContainerSummary,
  LinuxContainerResources,
  LinuxContainerResourcesInput,
} from '../../../shared/domain/container';
import { invalidArgument } from '../../../shared/domain/errors';
import * as pb from '../generated/runtime_v1';

const int64 = (s: string | undefined): number => Number(s ?? 0);
const u64 = (v: string | undefined) => (v === undefined ? undefined : { value: v });

export function containerStateToProto(s: ContainerState): pb.ContainerState {
  return pb.ContainerState[s];
}

export function containerStateFromProto(s: pb.ContainerState): ContainerState {
  return s === pb.ContainerState.CONTAINER_CREATED
    ? 'CONTAINER_CREATED'
    : s === pb.ContainerState.CONTAINER_RUNNING
      ? 'CONTAINER_RUNNING'
      : s === pb.ContainerState.CONTAINER_EXITED
        ? 'CONTAINER_EXITED'
        : 'CONTAINER_UNKNOWN';
}

export function resourcesFromProto(r: pb.LinuxContainerResources): LinuxContainerResourcesInput {
  return {
    cpu_period: int64(r.cpuPeriod),
    cpu_quota: int64(r.cpuQuota),
    cpu_shares: int64(r.cpuShares),
    memory_limit_in_bytes: int64(r.memoryLimitInBytes),
    oom_score_adj: int64(r.oomScoreAdj),
    cpuset_cpus: r.cpusetCpus,
    cpuset_mems: r.cpusetMems,
    memory_swap_limit_in_bytes: int64(r.memorySwapLimitInBytes),
    unified: { ...r.unified },
  };
}

export function resourcesToProto(r: LinuxContainerResourcesInput | LinuxContainerResources): pb.LinuxContainerResources {
  return pb.LinuxContainerResources.fromPartial({
    cpuPeriod: String(r.cpu_period ?? 0),
    cpuQuota: String(r.cpu_quota ?? 0),
    cpuShares: String(r.cpu_shares ?? 0),
    memoryLimitInBytes: String(r.memory_limit_in_bytes ?? 0),
    oomScoreAdj: String(r.oom_score_adj ?? 0),
    cpusetCpus: r.cpuset_cpus ?? '',
    cpusetMems: r.cpuset_mems ?? '',
    memorySwapLimitInBytes: String(r.memory_swap_limit_in_bytes ?? 0),
    unified: r.unified ?? {},
  });
}

const profile = (p: pb.SecurityProfile | undefined) => (p ? { profile_type: p.profileType, localhost_ref: p.localhostRef } : undefined);

/** Wire ⇒ domain input; the engine validates. Fields Podscope cannot apply are refused, not dropped. */
export function containerConfigFromProto(c: pb.ContainerConfig | undefined): ContainerConfigInput {
  if (!c || !c.metadata) throw invalidArgument('container config must include metadata');
  const sc = c.linux?.securityContext;
  const se = sc?.selinuxOptions;
  if (se && (se.user || se.role || se.type || se.level))
    throw invalidArgument('podscope cannot apply linux.security_context.selinux_options (SELinux is not supported)');
  if (sc && sc.supplementalGroupsPolicy !== pb.SupplementalGroupsPolicy.Merge)
    throw invalidArgument('podscope cannot apply linux.security_context.supplemental_groups_policy Strict');
  const out: ContainerConfigInput = {
    metadata: { name: c.metadata.name, attempt: c.metadata.attempt },
    image: {
      image: c.image?.image ?? '',
      annotations: { ...c.image?.annotations },
      user_specified_image: c.image?.userSpecifiedImage ?? '',
    },
    command: [...c.command],
    args: [...c.args],
    working_dir: c.workingDir,
    envs: c.envs.map((e) => ({ key: e.key, value: e.value })),
    mounts: c.mounts.map((m) => ({
      container_path: m.containerPath,
      host_path: m.hostPath,
      readonly: m.readonly,
      selinux_relabel: m.selinuxRelabel,
      propagation: m.propagation,
      recursive_read_only: m.recursiveReadOnly,
    })),
    devices: c.devices.map((d) => ({ container_path: d.containerPath, host_path: d.hostPath, permissions: d.permissions })),
    labels: { ...c.labels },
    annotations: { ...c.annotations },
    log_path: c.logPath,
    stdin: c.stdin,
    stdin_once: c.stdinOnce,
    tty: c.tty,
    stop_signal: c.stopSignal,
  };
  if (c.linux) {
    out.linux = {};
    if (c.linux.resources) out.linux.resources = resourcesFromProto(c.linux.resources);
    if (sc) {
      const ns = sc.namespaceOptions;
      out.linux.security_context = {
        privileged: sc.privileged,
        run_as_username: sc.runAsUsername,
        readonly_rootfs: sc.readonlyRootfs,
        supplemental_groups: sc.supplementalGroups.map(int64),
        apparmor_profile: sc.apparmorProfile,
        seccomp_profile_path: sc.seccompProfilePath,
        no_new_privs: sc.noNewPrivs,
        masked_paths: [...sc.maskedPaths],
        readonly_paths: [...sc.readonlyPaths],
        ...(sc.capabilities && {
          capabilities: {
            add_capabilities: [...sc.capabilities.addCapabilities],
            drop_capabilities: [...sc.capabilities.dropCapabilities],
            add_ambient_capabilities: [...sc.capabilities.addAmbientCapabilities],
          },
        }),
        ...(ns && { namespace_options: { network: ns.network, pid: ns.pid, ipc: ns.ipc, target_id: ns.targetId } }),
        ...(sc.runAsUser && { run_as_user: { value: int64(sc.runAsUser.value) } }),
        ...(sc.runAsGroup && { run_as_group: { value: int64(sc.runAsGroup.value) } }),
        ...(sc.seccomp && { seccomp: profile(sc.seccomp) }),
        ...(sc.apparmor && { apparmor: profile(sc.apparmor) }),
      };
    }
  }
  return out;
}

/** Domain (defaulted) ⇒ wire, for the client's CreateContainer. */
export function containerConfigToProto(c: ContainerConfig): pb.ContainerConfig {
  const sc = c.linux?.security_context;
  const prof = (p: { profile_type: number; localhost_ref: string } | undefined) =>
    p ? { profileType: p.profile_type, localhostRef: p.localhost_ref } : undefined;
  return pb.ContainerConfig.fromPartial({
    metadata: { ...c.metadata },
    image: { image: c.image.image, annotations: c.image.annotations, userSpecifiedImage: c.image.user_specified_image },
    command: c.command,
    args: c.args,
    workingDir: c.working_dir,
    envs: c.envs,
    mounts: c.mounts.map((m) => ({
      containerPath: m.container_path,
      hostPath: m.host_path,
      readonly: m.readonly,
      selinuxRelabel: m.selinux_relabel,
      propagation: m.propagation,
      recursiveReadOnly: m.recursive_read_only,
    })),
    devices: c.devices.map((d) => ({ containerPath: d.container_path, hostPath: d.host_path, permissions: d.permissions })),
    labels: c.labels,
    annotations: c.annotations,
    logPath: c.log_path,
    stdin: c.stdin,
    stdinOnce: c.stdin_once,
    tty: c.tty,
    stopSignal: c.stop_signal,
    ...(c.linux && {
      linux: {
        ...(c.linux.resources && { resources: resourcesToProto(c.linux.resources) }),
        ...(sc && {
          securityContext: {
            privileged: sc.privileged,
            runAsUsername: sc.run_as_username,
            readonlyRootfs: sc.readonly_rootfs,
            supplementalGroups: sc.supplemental_groups.map(String),
            apparmorProfile: sc.apparmor_profile,
            seccompProfilePath: sc.seccomp_profile_path,
            noNewPrivs: sc.no_new_privs,
            maskedPaths: sc.masked_paths,
            readonlyPaths: sc.readonly_paths,
            ...(sc.capabilities && {
              capabilities: {
                addCapabilities: sc.capabilities.add_capabilities,
                dropCapabilities: sc.capabilities.drop_capabilities,
                addAmbientCapabilities: sc.capabilities.add_ambient_capabilities,
              },
            }),
            ...(sc.namespace_options && {
              namespaceOptions: {
                network: sc.namespace_options.network,
                pid: sc.namespace_options.pid,
                ipc: sc.namespace_options.ipc,
                targetId: sc.namespace_options.target_id,
              },
            }),
            ...(sc.run_as_user && { runAsUser: { value: String(sc.run_as_user.value) } }),
            ...(sc.run_as_group && { runAsGroup: { value: String(sc.run_as_group.value) } }),
            ...(sc.seccomp && { seccomp: prof(sc.seccomp) }),
            ...(sc.apparmor && { apparmor: prof(sc.apparmor) }),
          },
        }),
      },
    }),
  });
}

export function summaryToContainer(s: ContainerSummary): pb.Container {
  return {
    id: s.id,
    podSandboxId: s.podSandboxId,
    metadata: { ...s.metadata },
    image: pb.ImageSpec.fromPartial({ image: s.image }),
    imageRef: s.imageRef,
    state: containerStateToProto(s.state),
    createdAt: s.createdAtNs,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    imageId: s.imageRef,
  };
}

export function containerFromProto(c: pb.Container): ContainerSummary {
  return {
    id: c.id,
    podSandboxId: c.podSandboxId,
    name: c.metadata?.name ?? '',
    metadata: { name: c.metadata?.name ?? '', attempt: c.metadata?.attempt ?? 0 },
    image: c.image?.image ?? '',
    imageRef: c.imageRef,
    state: containerStateFromProto(c.state),
    createdAt: new Date(Number(BigInt(c.createdAt) / 1_000_000n)).toISOString(),
    createdAtNs: c.createdAt,
    labels: { ...c.labels },
    annotations: { ...c.annotations },
    reason: '',
    exitCode: 0,
  };
}

export function statusToProto(s: ContainerStatusView): pb.ContainerStatus {
  return {
    id: s.id,
    metadata: { ...s.metadata },
    state: containerStateToProto(s.state),
    createdAt: s.createdAtNs,
    startedAt: s.startedAtNs,
    finishedAt: s.finishedAtNs,
    exitCode: s.exitCode,
    image: pb.ImageSpec.fromPartial({ image: s.image }),
    imageRef: s.imageRef,
    reason: s.reason,
    message: s.message,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    mounts: s.mounts.map((m) => ({
      containerPath: m.container_path,
      hostPath: m.host_path,
      readonly: m.readonly,
      selinuxRelabel: m.selinux_relabel,
      propagation: m.propagation,
      recursiveReadOnly: m.recursive_read_only,
    })),
    logPath: s.logPath,
    resources: s.resources ? { linux: resourcesToProto(s.resources) } : undefined,
    imageId: s.imageRef,
    user: { linux: { uid: String(s.user.uid), gid: String(s.user.gid), supplementalGroups: s.user.supplementalGroups.map(String) } },
    stopSignal: s.config.stop_signal,
  };
}

/** Wire ⇒ the parts of the status view a peer can give (the rest comes from verbose info when it is Podscope). */
export function statusFromProto(s: pb.ContainerStatus, podSandboxId: string): ContainerStatusView {
  const metadata = { name: s.metadata?.name ?? '', attempt: s.metadata?.attempt ?? 0 };
  return {
    id: s.id,
    podSandboxId,
    name: metadata.name,
    metadata,
    image: s.image?.image ?? '',
    imageRef: s.imageRef,
    state: containerStateFromProto(s.state),
    createdAt: new Date(Number(BigInt(s.createdAt) / 1_000_000n)).toISOString(),
    createdAtNs: s.createdAt,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    reason: s.reason,
    exitCode: s.exitCode,
    startedAtNs: s.startedAt,
    finishedAtNs: s.finishedAt,
    message: s.message,
    mounts: s.mounts.map((m) => ({
      container_path: m.containerPath,
      host_path: m.hostPath,
      readonly: m.readonly,
      selinux_relabel: m.selinuxRelabel,
      propagation: m.propagation,
      recursive_read_only: m.recursiveReadOnly,
    })),
    logPath: s.logPath,
    user: {
      uid: int64(s.user?.linux?.uid),
      gid: int64(s.user?.linux?.gid),
      supplementalGroups: (s.user?.linux?.supplementalGroups ?? []).map(int64),
    },
    seccomp: '',
    apparmor: '',
    stopSignal: '',
    config: {
      metadata,
      image: { image: s.image?.image ?? '', annotations: {}, user_specified_image: '', runtime_handler: '', image_ref: '' },
      command: [],
      args: [],
      working_dir: '',
      envs: [],
      mounts: [],
      devices: [],
      labels: { ...s.labels },
      annotations: { ...s.annotations },
      log_path: '',
      stdin: false,
      stdin_once: false,
      tty: false,
      stop_signal: s.stopSignal,
    },
    // a peer's steps come from its verbose info (Podscope's); the CRI status has none
    trace: [],
  };
}

export function statsToProto(s: ContainerStats): pb.ContainerStats {
  return {
    attributes: { id: s.id, metadata: { ...s.metadata }, labels: { ...s.labels }, annotations: { ...s.annotations } },
    cpu: { timestamp: s.timestampNs, usageCoreNanoSeconds: u64(s.cpuUsageCoreNs), usageNanoCores: undefined },
    memory: pb.MemoryUsage.fromPartial({
      timestamp: s.timestampNs,
      workingSetBytes: u64(s.memoryWorkingSetBytes),
      usageBytes: u64(s.memoryUsageBytes),
      rssBytes: u64(s.memoryRssBytes),
    }),
    writableLayer: undefined,
  };
}

export function statsFromProto(s: pb.ContainerStats, podSandboxId = ''): ContainerStats {
  const a = s.attributes;
  return {
    id: a?.id ?? '',
    podSandboxId,
    metadata: { name: a?.metadata?.name ?? '', attempt: a?.metadata?.attempt ?? 0 },
    labels: { ...a?.labels },
    annotations: { ...a?.annotations },
    timestampNs: s.cpu?.timestamp ?? s.memory?.timestamp ?? '0',
    ...(s.cpu?.usageCoreNanoSeconds && { cpuUsageCoreNs: s.cpu.usageCoreNanoSeconds.value }),
    ...(s.memory?.workingSetBytes && { memoryWorkingSetBytes: s.memory.workingSetBytes.value }),
    ...(s.memory?.usageBytes && { memoryUsageBytes: s.memory.usageBytes.value }),
    ...(s.memory?.rssBytes && { memoryRssBytes: s.memory.rssBytes.value }),
  };
}
