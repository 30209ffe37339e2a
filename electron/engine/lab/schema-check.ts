/**
 * A small JSON Schema checker for the subset the lab's plugin schemas use (type, const, enum, properties, required,
 * items, additionalProperties as a schema or false, minimum/maximum, minLength/maxLength, minItems, pattern, and the
 * address formats "cidr" and "ip"); a full validator would be a dependency for ~100 lines.
 *
 * With `additionalProperties: false` a key the schema does not list is an error with the nearest listed key as a
 * suggestion: a plugin silently ignores what it does not read, so a misspelt key is a setting that never takes effect.
 * A key that differs from a listed one only in case is a warning instead: the plugins decode with Go's encoding/json,
 * which matches keys case-insensitively, so it does take effect.
 */
import { cidrProblem, ipProblem } from './cidr';

export interface JsonSchema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  format?: 'cidr' | 'ip';
  title?: string;
  description?: string;
}

export interface SchemaProblem {
  path: Array<string | number>;
  message: string;
  /** the problem is a key (not its value): point at the key */
  atKey?: boolean;
  /** accepted by the plugin, but not as documented */
  warning?: boolean;
}

export interface SchemaCheckOptions {
  /** keys every object at the top level may carry besides the schema's own (the CNI envelope a runtime adds) */
  envelopeKey?: (key: string) => boolean;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(actual: string, wanted: string): boolean {
  return actual === wanted || (wanted === 'number' && actual === 'integer');
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-insensitive. */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++)
    for (let j = 1; j <= y.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[x.length]![y.length]!;
}

/** The listed key a misspelling most likely meant: a close edit, or one the key is a prefix/abbreviation of. */
export function nearestKey(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { k: string; score: number } | undefined;
  for (const k of known) {
    const kl = k.toLowerCase();
    const dist = editDistance(key, k);
    let score = dist <= Math.max(1, Math.floor(Math.max(key.length, k.length) / 4)) ? dist : Infinity;
    if (lower.length >= 4 && (kl.startsWith(lower) || lower.startsWith(kl)))
      score = Math.min(score, 0.5 + Math.abs(kl.length - lower.length) / 100);
    if (score < (best?.score ?? Infinity)) best = { k, score };
  }
  return best?.k;
}

export function checkSchema(
  schema: JsonSchema,
  value: unknown,
  path: Array<string | number> = [],
  out: SchemaProblem[] = [],
  options: SchemaCheckOptions = {},
): SchemaProblem[] {
  const problem = (message: string) => out.push({ path, message });
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const wanted = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!wanted.some((w) => typeMatches(actual, w))) {
      problem(`expected ${wanted.join(' or ')}, got ${actual}`);
      return out;
    }
  }
  if (schema.const !== undefined && value !== schema.const) problem(`must be ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) problem(`must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problem(`must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problem(`must be <= ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problem(schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) problem(`must be at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      problem(`${JSON.stringify(value)} does not match ${schema.pattern}`);
    const formatProblem = schema.format === 'cidr' ? cidrProblem(value) : schema.format === 'ip' ? ipProblem(value) : undefined;
    if (formatProblem) problem(formatProblem);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      problem(`needs at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}`);
    if (schema.items) value.forEach((v, i) => checkSchema(schema.items!, v, [...path, i], out, options));
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? [])
      if (!(key in obj)) out.push({ path, message: `missing required field ${JSON.stringify(key)}` });
    const listed = Object.keys(schema.properties ?? {});
    for (const [key, v] of Object.entries(obj)) {
      const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (sub) {
        checkSchema(sub, v, [...path, key], out, options);
        continue;
      }
      if (schema.additionalProperties !== false || (path.length === 0 && options.envelopeKey?.(key))) continue;
      const sameButCase = listed.find((k) => k.toLowerCase() === key.toLowerCase());
      if (sameButCase) {
        out.push({
          path: [...path, key],
          atKey: true,
          warning: true,
          message: `"${key}" is read as "${sameButCase}" (keys match case-insensitively); write "${sameButCase}"`,
        });
        checkSchema(schema.properties![sameButCase]!, v, [...path, key], out, options);
        continue;
      }
      const near = nearestKey(key, listed);
      out.push({
        path: [...path, key],
        atKey: true,
        message: `unknown key "${key}"${near ? ` (did you mean ${near}?)` : ''}; the plugin ignores it`,
      });
    }
  }
  return out;
}
