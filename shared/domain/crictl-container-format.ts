/**
 * crictl's container-config files (cmd/crictl/util.go loadContainerConfig): JSON or YAML, proto field names in
 * snake_case, enums as numbers. Read with the same rules as the pod configs (shared/domain/crictl-format.ts):
 * unknown keys are named instead of silently dropped, other cases are matched and pointed out.
 */
import { parse as parseYaml } from 'yaml';
import { ContainerConfigSchema, MountPropagation, type ContainerConfig } from './container';
import { formatIssues, NamespaceMode, ProfileType } from './config';
import { normalizeKeys, type AnySchema, type KeyRules } from './crictl-format';
import { PodscopeError } from './errors';

const RULES: KeyRules = {
  unsupported: new Set([
    'windows',
    'CDI_devices',
    'linux.resources.hugepage_limits',
    'linux.security_context.selinux_options',
    'linux.security_context.supplemental_groups_policy',
    'mounts.uidMappings',
    'mounts.gidMappings',
    'mounts.image',
    'mounts.image_sub_path',
    'mounts.mount_options',
  ]),
  enums: {
    'mounts[].propagation': MountPropagation,
    'linux.security_context.namespace_options.network': NamespaceMode,
    'linux.security_context.namespace_options.pid': NamespaceMode,
    'linux.security_context.namespace_options.ipc': NamespaceMode,
    'linux.security_context.seccomp.profile_type': ProfileType,
    'linux.security_context.apparmor.profile_type': ProfileType,
  },
};

/** Throws InvalidArgument naming the file; crictl requires metadata.name. */
export function loadCrictlContainerConfig(text: string, source: string): { config: ContainerConfig; warnings: string[] } {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new PodscopeError('InvalidArgument', `${source}: not valid JSON or YAML: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new PodscopeError('InvalidArgument', `${source}: a container config must be an object`);
  const warnings: string[] = [];
  const input = normalizeKeys(ContainerConfigSchema as unknown as AnySchema, raw, '', warnings, RULES) as Record<string, unknown>;
  if (!input.metadata) throw new PodscopeError('InvalidArgument', `${source}: metadata is required`);
  const parsed = ContainerConfigSchema.safeParse(input);
  if (!parsed.success)
    throw new PodscopeError('InvalidArgument', `${source}: ${formatIssues(parsed.error).join('; ')}`, { details: { warnings } });
  if (!parsed.data.metadata.name) throw new PodscopeError('InvalidArgument', `${source}: metadata.name must be set`);
  return { config: parsed.data, warnings };
}
