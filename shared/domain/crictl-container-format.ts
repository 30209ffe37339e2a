/**
 * crictl's container-config files (cmd/crictl/util.go loadContainerConfig): JSON or YAML, proto field names in
 * snake_case, enums as numbers. Read with the same rules as the pod configs (shared/domain/crictl-format.ts):
 * unknown keys are named instead of silently dropped, other cases are matched and pointed out.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ContainerConfigSchema, MountPropagation, type ContainerConfig, type ContainerConfigInput } from './container';
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

/** Import for forms: never throws; errors and warnings as text, the config when there is no error. */
export function importContainerConfig(text: string): { config?: ContainerConfig; warnings: string[]; errors: string[] } {
  try {
    const r = loadCrictlContainerConfig(text, 'container config');
    return { config: r.config, warnings: r.warnings, errors: [] };
  } catch (e) {
    const details = (e as PodscopeError).details as { warnings?: string[] } | undefined;
    return { warnings: details?.warnings ?? [], errors: [(e as Error).message] };
  }
}

/**
 * A tidy crictl container-config file: the fields a user sets, empty optional sections left out, in the order
 * crictl's examples use (metadata, image, command, args, working_dir, envs, mounts, labels, annotations, log_path, linux).
 */
export function exportContainerConfig(config: ContainerConfigInput, format: 'json' | 'yaml'): string {
  const parsed = ContainerConfigSchema.safeParse(config);
  const c = parsed.success ? parsed.data : (config as ContainerConfig);
  const out: Record<string, unknown> = { metadata: c.metadata, image: { image: c.image?.image ?? '' } };
  if (c.command?.length) out.command = c.command;
  if (c.args?.length) out.args = c.args;
  if (c.working_dir) out.working_dir = c.working_dir;
  if (c.envs?.length) out.envs = c.envs;
  if (c.mounts?.length) out.mounts = c.mounts;
  if (c.devices?.length) out.devices = c.devices;
  if (c.labels && Object.keys(c.labels).length) out.labels = c.labels;
  if (c.annotations && Object.keys(c.annotations).length) out.annotations = c.annotations;
  if (c.log_path) out.log_path = c.log_path;
  if (c.stdin) out.stdin = true;
  if (c.stdin_once) out.stdin_once = true;
  if (c.tty) out.tty = true;
  if (c.linux) out.linux = c.linux;
  if (c.stop_signal) out.stop_signal = c.stop_signal;
  return format === 'json' ? `${JSON.stringify(out, null, 2)}\n` : stringifyYaml(out);
}
