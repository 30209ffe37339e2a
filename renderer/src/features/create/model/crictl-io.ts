/**
 * Import and export of crictl pod-config files (`crictl runp pod.json|pod.yaml`): snake_case proto field names,
 * numeric enums. crictl silently ignores unknown keys (and matches keys case-insensitively); Podscope warns
 * instead, so a typo like `logDirectory` or `portMappings` is visible rather than quietly lost.
 */
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import {
  NamespaceMode,
  PodSandboxConfigSchema,
  Protocol,
  formatIssues,
  type PodSandboxConfig,
  type PodSandboxConfigInput,
} from '../../../../../shared/domain/config';

type Shape = true | 'map' | { [k: string]: Shape } | [Shape];

const NAMESPACE_OPTIONS: Shape = { network: true, pid: true, ipc: true, target_id: true };
/** The keys Podscope understands (PodSandboxConfigSchema). */
const KNOWN: Shape = {
  metadata: { name: true, uid: true, namespace: true, attempt: true },
  hostname: true,
  log_directory: true,
  dns_config: { servers: true, searches: true, options: true },
  port_mappings: [{ protocol: true, container_port: true, host_port: true, host_ip: true }],
  labels: 'map',
  annotations: 'map',
  linux: {
    cgroup_parent: true,
    sysctls: 'map',
    security_context: {
      namespace_options: NAMESPACE_OPTIONS,
      run_as_user: { value: true },
      run_as_group: { value: true },
      readonly_rootfs: true,
      supplemental_groups: true,
      privileged: true,
      seccomp_profile_path: true,
    },
  },
};
/** Real CRI fields Podscope does not model: named as such rather than as typos. */
const CRI_BUT_UNSUPPORTED = new Set([
  'windows', 'linux.overhead', 'linux.resources', 'linux.security_context.selinux_options', 'linux.security_context.seccomp',
  'linux.security_context.apparmor', 'linux.security_context.namespace_options.userns_options',
]);

const ENUM_PATHS: Record<string, Record<string, number>> = {
  'port_mappings[].protocol': Protocol,
  'linux.security_context.namespace_options.network': NamespaceMode,
  'linux.security_context.namespace_options.pid': NamespaceMode,
  'linux.security_context.namespace_options.ipc': NamespaceMode,
};

const toSnake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Walks `value` against `shape`, keeping known keys (case-insensitively, as Go's JSON decoder does) and warning about the rest. */
function clean(value: unknown, shape: Shape, path: string, warnings: string[]): unknown {
  if (shape === true || shape === 'map') return value;
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return value;
    return value.map((v, i) => clean(v, shape[0], `${path}[${i}]`, warnings));
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [rawKey, v] of Object.entries(value)) {
    const key = Object.keys(shape).find((k) => k.toLowerCase() === rawKey.toLowerCase());
    const full = path ? `${path}.${key ?? rawKey}` : (key ?? rawKey);
    if (!key) {
      const generic = full.replace(/\[\d+\]/g, '');
      if (CRI_BUT_UNSUPPORTED.has(generic)) warnings.push(`${full}: a CRI field Podscope does not support; it was left out`);
      else {
        const snake = toSnake(rawKey);
        const hint = snake !== rawKey && Object.keys(shape).includes(snake) ? ` (did you mean "${snake}"? crictl uses snake_case proto names)` : '';
        warnings.push(`${full}: unknown key, ignored as crictl would ignore it${hint}`);
      }
      continue;
    }
    if (key !== rawKey) warnings.push(`${full}: written "${rawKey}"; crictl matches keys case-insensitively, so it is read as "${key}"`);
    const enumValues = ENUM_PATHS[full.replace(/\[\d+\]/g, '[]')];
    if (enumValues && typeof v === 'string') warnings.push(`${full}: "${v}" is an enum name; crictl needs the number (${enumValues[v.toUpperCase()] ?? '?'})`);
    out[key] = clean(v, shape[key]!, full, warnings);
  }
  return out;
}

export interface ImportResult {
  config?: PodSandboxConfigInput;
  warnings: string[];
  errors: string[];
}

export function importCrictl(text: string): ImportResult {
  const warnings: string[] = [];
  let raw: unknown;
  try {
    raw = parseYaml(text); // YAML is a superset of JSON: one parser for both, as crictl (sigs.k8s.io/yaml) does
  } catch (e) {
    return { warnings, errors: [`not valid JSON or YAML: ${(e as Error).message}`] };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { warnings, errors: ['a pod config must be an object with at least "metadata"'] };
  const cleaned = clean(raw, KNOWN, '', warnings) as Record<string, unknown>;
  if (!cleaned.metadata) return { warnings, errors: ['metadata is required (crictl: "metadata" is required)'] };
  const parsed = PodSandboxConfigSchema.safeParse(cleaned);
  if (!parsed.success) return { warnings, errors: formatIssues(parsed.error) };
  const meta = (cleaned.metadata ?? {}) as Record<string, unknown>;
  if (!meta.uid) warnings.push('metadata.uid is empty: a new uid was generated (crictl does the same)');
  return { config: cleaned as PodSandboxConfigInput, warnings, errors: [] };
}

/** A tidy crictl file: canonical key order, numeric enums, empty optional sections left out. */
export function exportCrictl(config: PodSandboxConfigInput, format: 'json' | 'yaml'): string {
  const parsed = PodSandboxConfigSchema.safeParse(config);
  const c: PodSandboxConfigInput = parsed.success ? parsed.data : config;
  const out: Record<string, unknown> = {
    metadata: c.metadata,
    hostname: c.hostname ?? '',
  };
  if (c.log_directory) out.log_directory = c.log_directory;
  if (c.dns_config) out.dns_config = c.dns_config;
  out.port_mappings = c.port_mappings ?? [];
  out.labels = c.labels ?? {};
  out.annotations = c.annotations ?? {};
  if (c.linux) out.linux = c.linux;
  return format === 'json' ? `${JSON.stringify(out, null, 2)}\n` : toYaml(out);
}

/** A status's config made ready for the form: a fresh uid and attempt 0 so it is a new pod, not a retry. */
export function toCrictlConfig(config: PodSandboxConfig, opts: { freshUid?: boolean } = {}): PodSandboxConfigInput {
  const c = structuredClone(config) as PodSandboxConfigInput;
  if (opts.freshUid) c.metadata = { ...c.metadata, uid: globalThis.crypto.randomUUID(), attempt: 0 };
  return c;
}
