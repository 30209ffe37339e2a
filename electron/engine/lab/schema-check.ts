/**
 * A small JSON Schema checker for the subset the lab's plugin schemas use (type, const, enum, properties, required,
 * items, additionalProperties as a schema, minimum/maximum, minLength/maxLength, minItems, pattern). Unknown keys are
 * allowed everywhere, as the plugins themselves ignore them; a full validator would be a dependency for ~60 lines.
 */
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
  title?: string;
  description?: string;
}

export interface SchemaProblem {
  path: Array<string | number>;
  message: string;
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

export function checkSchema(
  schema: JsonSchema,
  value: unknown,
  path: Array<string | number> = [],
  out: SchemaProblem[] = [],
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
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      problem(`needs at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}`);
    if (schema.items) value.forEach((v, i) => checkSchema(schema.items!, v, [...path, i], out));
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? [])
      if (!(key in obj)) out.push({ path, message: `missing required field ${JSON.stringify(key)}` });
    for (const [key, v] of Object.entries(obj)) {
      const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (sub) checkSchema(sub, v, [...path, key], out);
    }
  }
  return out;
}
