/**
 * PodSandboxConfig: CRI wire message (ts-proto, camelCase, int64 as strings) ⇄ Podscope's domain config
 * (CRI snake_case names, numeric enums, shared/domain/config.ts).
 *
 * The domain config has no place for SELinux, user namespaces or the supplemental groups policy, and the pause
 * container does not apply them (seccomp is applied; AppArmor is carried but, as in containerd, unused for the pause). The server therefore refuses a request that sets
 * any of them to a non-default value instead of silently running a less-confined sandbox ("strict"); the client
 * decoding another runtime's stored config just drops them ("lenient").
 */
import { invalidArgument } from '../../../shared/domain/errors';
import type { PodSandboxConfig as DomainConfig, PodSandboxConfigInput } from '../../../shared/domain/config';
import * as pb from '../generated/runtime_v1';

export type UnsupportedPolicy = 'strict' | 'lenient';

const int64 = (s: string | undefined): number => Number(s ?? 0);

/** The fields of a request the engine cannot honour, named by their CRI paths. */
export function unsupportedSandboxFields(config: pb.PodSandboxConfig): string[] {
  const sc = config.linux?.securityContext;
  const out: string[] = [];
  if (!sc) return out;
  const se = sc.selinuxOptions;
  if (se && (se.user || se.role || se.type || se.level)) out.push('linux.security_context.selinux_options');
  if (sc.supplementalGroupsPolicy !== pb.SupplementalGroupsPolicy.Merge) out.push('linux.security_context.supplemental_groups_policy');
  const userns = sc.namespaceOptions?.usernsOptions;
  if (userns && (userns.mode !== pb.NamespaceMode.POD || userns.uids.length || userns.gids.length))
    out.push('linux.security_context.namespace_options.userns_options');
  return out;
}

/**
 * Wire ⇒ domain input (the engine applies defaults and validates). A missing metadata is InvalidArgument with
 * containerd's message, since every later step (name reservation, CNI args) needs it.
 */
export function configFromProto(config: pb.PodSandboxConfig | undefined, policy: UnsupportedPolicy = 'strict'): PodSandboxConfigInput {
  if (!config || !config.metadata) throw invalidArgument('sandbox config must include metadata');
  if (policy === 'strict') {
    const unsupported = unsupportedSandboxFields(config);
    if (unsupported.length)
      throw invalidArgument(`podscope cannot apply ${unsupported.join(', ')}: not supported for a pod sandbox`, { fields: unsupported });
  }
  const m = config.metadata;
  const out: PodSandboxConfigInput = {
    metadata: { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt },
    hostname: config.hostname,
    log_directory: config.logDirectory,
    port_mappings: config.portMappings.map((p) => ({
      protocol: p.protocol,
      container_port: p.containerPort,
      host_port: p.hostPort,
      host_ip: p.hostIp,
    })),
    labels: { ...config.labels },
    annotations: { ...config.annotations },
  };
  // dns_config presence matters (an empty DNSConfig writes an empty resolv.conf, a missing one copies the host's).
  if (config.dnsConfig)
    out.dns_config = {
      servers: [...config.dnsConfig.servers],
      searches: [...config.dnsConfig.searches],
      options: [...config.dnsConfig.options],
    };
  const linux = config.linux;
  if (linux) {
    const sc = linux.securityContext;
    out.linux = { cgroup_parent: linux.cgroupParent, sysctls: { ...linux.sysctls } };
    if (sc) {
      out.linux.security_context = {
        readonly_rootfs: sc.readonlyRootfs,
        supplemental_groups: sc.supplementalGroups.map(int64),
        privileged: sc.privileged,
        seccomp_profile_path: sc.seccompProfilePath,
        ...(sc.seccomp && { seccomp: { profile_type: sc.seccomp.profileType, localhost_ref: sc.seccomp.localhostRef } }),
        ...(sc.apparmor && { apparmor: { profile_type: sc.apparmor.profileType, localhost_ref: sc.apparmor.localhostRef } }),
      };
      const ns = sc.namespaceOptions;
      if (ns) out.linux.security_context.namespace_options = { network: ns.network, pid: ns.pid, ipc: ns.ipc, target_id: ns.targetId };
      if (sc.runAsUser) out.linux.security_context.run_as_user = { value: int64(sc.runAsUser.value) };
      if (sc.runAsGroup) out.linux.security_context.run_as_group = { value: int64(sc.runAsGroup.value) };
    }
  }
  return out;
}

/** Domain (already defaulted by the schema) ⇒ wire, for the client's RunPodSandbox. */
export function configToProto(config: DomainConfig): pb.PodSandboxConfig {
  const out = pb.PodSandboxConfig.fromPartial({
    metadata: { ...config.metadata },
    hostname: config.hostname,
    logDirectory: config.log_directory,
    portMappings: config.port_mappings.map((p) => ({
      protocol: p.protocol,
      containerPort: p.container_port,
      hostPort: p.host_port,
      hostIp: p.host_ip,
    })),
    labels: config.labels,
    annotations: config.annotations,
  });
  if (config.dns_config) out.dnsConfig = { ...config.dns_config };
  if (config.linux) {
    const sc = config.linux.security_context;
    out.linux = pb.LinuxPodSandboxConfig.fromPartial({ cgroupParent: config.linux.cgroup_parent, sysctls: config.linux.sysctls });
    if (sc) {
      out.linux.securityContext = pb.LinuxSandboxSecurityContext.fromPartial({
        readonlyRootfs: sc.readonly_rootfs,
        supplementalGroups: sc.supplemental_groups.map(String),
        privileged: sc.privileged,
        seccompProfilePath: sc.seccomp_profile_path,
        ...(sc.seccomp && { seccomp: { profileType: sc.seccomp.profile_type, localhostRef: sc.seccomp.localhost_ref } }),
        ...(sc.apparmor && { apparmor: { profileType: sc.apparmor.profile_type, localhostRef: sc.apparmor.localhost_ref } }),
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
      });
    }
  }
  return out;
}

/** The namespace options echoed in PodSandboxStatus.linux, as containerd does (may be absent). */
export function namespaceOptionToProto(config: DomainConfig): pb.NamespaceOption | undefined {
  const ns = config.linux?.security_context?.namespace_options;
  return ns ? pb.NamespaceOption.fromPartial({ network: ns.network, pid: ns.pid, ipc: ns.ipc, targetId: ns.target_id }) : undefined;
}
