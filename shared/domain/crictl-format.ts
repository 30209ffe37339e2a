/**
 * crictl's pod-config files (FACTS F): JSON or YAML, proto field names in snake_case, enums as numbers.
 * Two deliberate differences from crictl: enum names ("UDP", "NODE") are accepted too, and unknown keys produce a
 * warning naming their path (crictl drops them silently, which hides typos like `portMappings`).
 * Keys are matched case-insensitively, as Go's encoding/json does.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { z } from 'zod';
import { PodscopeError } from './errors';
import { formatIssues, PodSandboxConfigSchema, type PodSandboxConfig } from './config';

export interface LoadedPodConfig {
  config: PodSandboxConfig;
  warnings: string[];
}

export function parsePodConfigText(text: string, source = 'pod config'): LoadedPodConfig {
  let raw: unknown;
  try {
    raw = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new PodscopeError('InvalidArgument', `${source}: not valid JSON or YAML: ${(e as Error).message}`);
  }
  return loadPodConfigObject(raw, source);
}

export function loadPodConfigObject(raw: unknown, source = 'pod config', opts: { fillUid?: () => string } = {}): LoadedPodConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new PodscopeError('InvalidArgument', `${source}: expected an object at the top level`);
  const warnings: string[] = [];
  const cleaned = normalizeKeys(PodSandboxConfigSchema, raw, '', warnings) as Record<string, unknown>;
  const meta = cleaned.metadata as Record<string, unknown> | undefined;
  if (!meta) throw new PodscopeError('InvalidArgument', `${source}: metadata is required`);
  if (!meta.name) throw new PodscopeError('InvalidArgument', `${source}: metadata.name must be set`);
  if (!meta.namespace) throw new PodscopeError('InvalidArgument', `${source}: metadata.namespace must be set`);
  if (!meta.uid && opts.fillUid) {
    meta.uid = opts.fillUid();
    warnings.push(`metadata.uid was empty: generated ${String(meta.uid)} (as crictl does)`);
  }
  const parsed = PodSandboxConfigSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new PodscopeError('InvalidArgument', `${source}: ${issues.join('; ')}`, { details: { issues } });
  }
  return { config: parsed.data, warnings };
}

export function formatPodConfig(config: PodSandboxConfig, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(config, null, 2)}\n` : stringifyYaml(config);
}

// --- schema-driven key walk ---------------------------------------------------------------------------------------

type AnySchema = z.core.$ZodType;

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

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function normalizeKeys(schema: AnySchema, value: unknown, path: string, warnings: string[]): unknown {
  const s = unwrap(schema);
  const d = def(s);
  if (d.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const shape = d.shape as Record<string, AnySchema>;
    const known = Object.keys(shape);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const exact = known.find((k) => k === key) ?? known.find((k) => k.toLowerCase() === key.toLowerCase());
      const where = path ? `${path}.${key}` : key;
      if (!exact) {
        const hint = known.find((k) => k === snake(key));
        warnings.push(hint ? `unknown key ${where} ignored (did you mean ${hint}? crictl files use snake_case)` : `unknown key ${where} ignored`);
        continue;
      }
      out[exact] = normalizeKeys(shape[exact]!, v, path ? `${path}.${exact}` : exact, warnings);
    }
    return out;
  }
  if (d.type === 'array' && Array.isArray(value)) {
    return value.map((item, i) => normalizeKeys(d.element as AnySchema, item, `${path}[${i}]`, warnings));
  }
  return value;
}
