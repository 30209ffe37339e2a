/**
 * crictl's pod-config files (docs/semantics.md#crictl-pod-config): JSON or YAML, proto field names in snake_case, enums as numbers. One reader
 * for the CLI and the create form, so both accept and warn about exactly the same things.
 *
 * Deliberate differences from crictl, each surfaced as a warning rather than silently: unknown keys are named
 * (crictl drops them, hiding typos like `portMappings`), real CRI fields Podscope does not model are named as such,
 * keys written in another case are matched as Go's encoding/json does but pointed out, and enum names ("UDP",
 * "NODE") are accepted though crictl needs the number.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { z } from 'zod';
import {
  formatIssues,
  NamespaceMode,
  ProfileType,
  PodSandboxConfigSchema,
  Protocol,
  type PodSandboxConfig,
  type PodSandboxConfigInput,
} from './config';
import { PodscopeError } from './errors';

export interface ImportedPodConfig {
  /** the file's content with unknown keys dropped and keys in their canonical case (no defaults filled in) */
  input?: PodSandboxConfigInput;
  /** the same, validated, with defaults */
  config?: PodSandboxConfig;
  warnings: string[];
  /** why the file cannot be used; empty when config is set */
  errors: string[];
}

/** Real CRI fields Podscope does not model: named as such rather than as typos. */
const CRI_BUT_UNSUPPORTED = new Set([
  'windows',
  'linux.overhead',
  'linux.resources',
  'linux.security_context.selinux_options',
  'linux.security_context.namespace_options.userns_options',
  'linux.security_context.supplemental_groups_policy',
]);

const ENUM_PATHS: Record<string, Record<string, number>> = {
  'port_mappings[].protocol': Protocol,
  'linux.security_context.namespace_options.network': NamespaceMode,
  'linux.security_context.namespace_options.pid': NamespaceMode,
  'linux.security_context.namespace_options.ipc': NamespaceMode,
  'linux.security_context.seccomp.profile_type': ProfileType,
  'linux.security_context.apparmor.profile_type': ProfileType,
};

/** Never throws: the form shows errors and warnings next to each other. */
export function importPodConfig(text: string): ImportedPodConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text); // YAML is a superset of JSON: one parser for both, as crictl (sigs.k8s.io/yaml) does
  } catch (e) {
    return { warnings: [], errors: [`not valid JSON or YAML: ${(e as Error).message}`] };
  }
  return importPodConfigObject(raw);
}

export function importPodConfigObject(raw: unknown): ImportedPodConfig {
  const warnings: string[] = [];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return { warnings, errors: ['a pod config must be an object with at least "metadata"'] };
  const input = normalizeKeys(PodSandboxConfigSchema, raw, '', warnings) as PodSandboxConfigInput;
  if (!input.metadata) return { input, warnings, errors: ['metadata is required (crictl: "metadata" is required)'] };
  const parsed = PodSandboxConfigSchema.safeParse(input);
  if (!parsed.success) return { input, warnings, errors: formatIssues(parsed.error) };
  return { input, config: parsed.data, warnings, errors: [] };
}

/**
 * The CLI's reading, with crictl's own validation on top: name and namespace must be set, and an empty uid is
 * filled in. Throws InvalidArgument naming the file.
 */
export function loadCrictlPodConfig(text: string, source: string, fillUid: () => string): { config: PodSandboxConfig; warnings: string[] } {
  const r = importPodConfig(text);
  if (!r.config)
    throw new PodscopeError('InvalidArgument', `${source}: ${r.errors.join('; ')}`, {
      details: { errors: r.errors, warnings: r.warnings },
    });
  const { config, warnings } = { config: r.config, warnings: r.warnings };
  if (!config.metadata.name) throw new PodscopeError('InvalidArgument', `${source}: metadata.name must be set`);
  if (!config.metadata.namespace) throw new PodscopeError('InvalidArgument', `${source}: metadata.namespace must be set`);
  if (!config.metadata.uid) {
    config.metadata.uid = fillUid();
    warnings.push(`metadata.uid is empty: generated ${config.metadata.uid} (crictl does the same)`);
  }
  return { config, warnings };
}

/** A tidy crictl file: canonical key order, numeric enums, empty optional sections left out. */
export function exportPodConfig(config: PodSandboxConfigInput, format: 'json' | 'yaml'): string {
  const parsed = PodSandboxConfigSchema.safeParse(config);
  const c: PodSandboxConfigInput = parsed.success ? parsed.data : config;
  const out: Record<string, unknown> = { metadata: c.metadata, hostname: c.hostname ?? '' };
  if (c.log_directory) out.log_directory = c.log_directory;
  if (c.dns_config) out.dns_config = c.dns_config;
  out.port_mappings = c.port_mappings ?? [];
  out.labels = c.labels ?? {};
  out.annotations = c.annotations ?? {};
  if (c.linux) out.linux = c.linux;
  return format === 'json' ? `${JSON.stringify(out, null, 2)}\n` : stringifyYaml(out);
}

// --- the key walk follows the zod schema itself, so it cannot drift from what the engine accepts ----------------------

export type AnySchema = z.core.$ZodType;

function def(schema: AnySchema): { type: string; [k: string]: unknown } {
  return (schema as unknown as { _zod: { def: { type: string; [k: string]: unknown } } })._zod.def;
}

/** Peels optional/default/nullable/pipe wrappers off to reach the structural schema. */
function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const d = def(s);
    if (d.type === 'optional' || d.type === 'default' || d.type === 'nullable' || d.type === 'prefault') s = d.innerType as AnySchema;
    else if (d.type === 'pipe') s = (def(d.in as AnySchema).type === 'transform' ? d.out : d.in) as AnySchema;
    else break;
  }
  return s;
}

const toSnake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export interface KeyRules {
  /** real CRI fields Podscope does not model, by dotted path */
  unsupported: ReadonlySet<string>;
  /** enum fields by dotted path (arrays as `[]`) */
  enums: Record<string, Record<string, number>>;
}

const POD_RULES: KeyRules = { unsupported: CRI_BUT_UNSUPPORTED, enums: ENUM_PATHS };

/** Keys matched as crictl (Go encoding/json) matches them, unknown ones named; also used for container configs. */
export function normalizeKeys(schema: AnySchema, value: unknown, path: string, warnings: string[], rules: KeyRules = POD_RULES): unknown {
  const d = def(unwrap(schema));
  if (d.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const shape = d.shape as Record<string, AnySchema>;
    const known = Object.keys(shape);
    const out: Record<string, unknown> = {};
    for (const [rawKey, v] of Object.entries(value as Record<string, unknown>)) {
      const key = known.find((k) => k === rawKey) ?? known.find((k) => k.toLowerCase() === rawKey.toLowerCase());
      const full = path ? `${path}.${key ?? rawKey}` : (key ?? rawKey);
      if (!key) {
        if (rules.unsupported.has(full.replace(/\[\d+\]/g, '')))
          warnings.push(`${full}: a CRI field Podscope does not support; it was left out`);
        else {
          const snake = toSnake(rawKey);
          const hint = snake !== rawKey && known.includes(snake) ? ` (did you mean "${snake}"? crictl uses snake_case proto names)` : '';
          warnings.push(`${full}: unknown key, ignored as crictl would ignore it${hint}`);
        }
        continue;
      }
      if (key !== rawKey) warnings.push(`${full}: written "${rawKey}"; crictl matches keys case-insensitively, so it is read as "${key}"`);
      const enumValues = rules.enums[full.replace(/\[\d+\]/g, '[]')];
      if (enumValues && typeof v === 'string')
        warnings.push(`${full}: "${v}" is an enum name; crictl needs the number (${enumValues[v.toUpperCase()] ?? '?'})`);
      out[key] = normalizeKeys(shape[key]!, v, full, warnings, rules);
    }
    return out;
  }
  if (d.type === 'array' && Array.isArray(value))
    return value.map((item, i) => normalizeKeys(d.element as AnySchema, item, `${path}[${i}]`, warnings, rules));
  return value;
}

/**
 * A status's config made ready for the form: a new uid (the caller makes one: this layer has no crypto) and attempt 0,
 * so it is a new pod rather than a retry of the old one. A JSON round trip is a deep copy here: configs are plain data.
 */
export function asNewPodConfig(config: PodSandboxConfig, newUid: string): PodSandboxConfigInput {
  const c = JSON.parse(JSON.stringify(config)) as PodSandboxConfigInput;
  c.metadata = { ...c.metadata, uid: newUid, attempt: 0 };
  return c;
}
