/**
 * Kubernetes label selector syntax (apimachinery pkg/labels selector.go), as users type it into kubectl -l:
 * `env`, `!env`, `app=web`, `app==web`, `app!=web`, `app in (web,api)`, `tier notin (x)`, `n>1`, `n<5`,
 * requirements joined by `,` (all must hold). `!=` and `notin` also match pods without the key, as in Kubernetes.
 * Keys and values are checked with Kubernetes' rules so a typo is reported instead of silently matching nothing.
 */

export type SelectorOperator = 'exists' | 'notExists' | 'equals' | 'notEquals' | 'in' | 'notIn' | 'gt' | 'lt';

export interface SelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values: string[];
}

export type ParsedSelector = { ok: true; requirements: SelectorRequirement[] } | { ok: false; error: string; position: number };

type TokenKind = 'id' | 'in' | 'notin' | '!' | '=' | '==' | '!=' | '>' | '<' | ',' | '(' | ')' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
}

const ID_CHAR = /[^\s,()=!<>]/;

function tokenize(input: string): Token[] | { error: string; position: number } {
  const out: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ kind: two, text: two, pos: i });
      i += 2;
      continue;
    }
    if ('!=<>,()'.includes(c)) {
      out.push({ kind: c as TokenKind, text: c, pos: i });
      i++;
      continue;
    }
    const start = i;
    while (i < input.length && ID_CHAR.test(input[i]!)) i++;
    const text = input.slice(start, i);
    out.push({ kind: text === 'in' ? 'in' : text === 'notin' ? 'notin' : 'id', text, pos: start });
  }
  out.push({ kind: 'end', text: '', pos: input.length });
  return out;
}

const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes IsQualifiedName: [prefix/]name, name ≤ 63 chars, prefix a DNS subdomain ≤ 253. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `key "${key}" has more than one "/"`;
  const name = parts[parts.length - 1]!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return `key prefix "${prefix}" must be a lowercase DNS subdomain (e.g. example.com)`;
  if (name.length === 0) return `key "${key}" has an empty name`;
  if (name.length > 63) return `key name "${name}" is longer than 63 characters`;
  if (!NAME.test(name)) return `key "${key}" may use only letters, digits, "-", "_" and "." and must start and end with a letter or digit`;
  return undefined;
}

/** Kubernetes IsValidLabelValue: empty, or ≤ 63 chars of [A-Za-z0-9-_.] starting and ending alphanumeric. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return `value "${value}" is longer than 63 characters`;
  if (!NAME.test(value))
    return `value "${value}" may use only letters, digits, "-", "_" and "." and must start and end with a letter or digit`;
  return undefined;
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}
  private peek(): Token {
    return this.tokens[this.i]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private fail(message: string, at: Token): never {
    throw Object.assign(new Error(message), { position: at.pos });
  }

  parse(): SelectorRequirement[] {
    const reqs: SelectorRequirement[] = [];
    if (this.peek().kind === 'end') return reqs;
    for (;;) {
      reqs.push(this.requirement());
      const t = this.next();
      if (t.kind === 'end') return reqs;
      if (t.kind !== ',') this.fail(`expected "," between requirements, found "${t.text}"`, t);
    }
  }

  private key(): string {
    const t = this.next();
    if (t.kind !== 'id') this.fail(t.kind === 'end' ? 'expected a label key at the end' : `expected a label key, found "${t.text}"`, t);
    const problem = labelKeyProblem(t.text);
    if (problem) this.fail(problem, t);
    return t.text;
  }

  private requirement(): SelectorRequirement {
    if (this.peek().kind === '!') {
      this.next();
      const key = this.key();
      const after = this.peek();
      if (after.kind !== ',' && after.kind !== 'end') this.fail(`"!${key}" takes no operator; found "${after.text}"`, after);
      return { key, operator: 'notExists', values: [] };
    }
    const key = this.key();
    const op = this.next();
    switch (op.kind) {
      case ',':
      case 'end':
        this.i--;
        return { key, operator: 'exists', values: [] };
      case '=':
      case '==':
        return { key, operator: 'equals', values: [this.value(true)] };
      case '!=':
        return { key, operator: 'notEquals', values: [this.value(true)] };
      case '>':
      case '<': {
        const v = this.value(false);
        if (!/^-?\d+$/.test(v)) this.fail(`"${op.text}" needs an integer, got "${v}"`, op);
        return { key, operator: op.kind === '>' ? 'gt' : 'lt', values: [v] };
      }
      case 'in':
      case 'notin':
        return { key, operator: op.kind === 'in' ? 'in' : 'notIn', values: this.set(op.text) };
      default:
        return this.fail(`unknown operator "${op.text}" after "${key}"; use =, ==, !=, in, notin, > or <`, op);
    }
  }

  private value(allowEmpty: boolean): string {
    const t = this.peek();
    if (t.kind === 'id' || t.kind === 'in' || t.kind === 'notin') {
      this.next();
      const problem = labelValueProblem(t.text);
      if (problem) this.fail(problem, t);
      return t.text;
    }
    if (allowEmpty && (t.kind === ',' || t.kind === 'end')) return '';
    return this.fail(t.kind === 'end' ? 'expected a value at the end' : `expected a value, found "${t.text}"`, t);
  }

  private set(op: string): string[] {
    const open = this.next();
    if (open.kind !== '(') this.fail(`"${op}" needs a parenthesised list, e.g. ${op} (a,b)`, open);
    const values: string[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === ')') {
        // "in ()" and a trailing "," stand for an empty value, as Kubernetes reads them
        if (values.length === 0 || this.tokens[this.i - 1]!.kind === ',') values.push('');
        this.next();
        return values;
      }
      if (t.kind === ',') {
        if (values.length === 0 || this.tokens[this.i - 1]!.kind === ',') values.push('');
        this.next();
        continue;
      }
      if (t.kind === 'end') this.fail(`missing ")" to close the "${op}" list`, t);
      values.push(this.value(false));
      const after = this.peek();
      if (after.kind === 'end') this.fail(`missing ")" to close the "${op}" list`, after);
      if (after.kind !== ',' && after.kind !== ')') this.fail(`expected "," or ")" in the "${op}" list, found "${after.text}"`, after);
    }
  }
}

export function parseLabelSelector(input: string): ParsedSelector {
  const tokens = tokenize(input);
  if (!Array.isArray(tokens)) return { ok: false, ...tokens };
  try {
    return { ok: true, requirements: new Parser(tokens).parse() };
  } catch (e) {
    return { ok: false, error: (e as Error).message, position: (e as { position?: number }).position ?? 0 };
  }
}

export function matchesRequirement(labels: Record<string, string>, r: SelectorRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'exists':
      return has;
    case 'notExists':
      return !has;
    case 'equals':
    case 'in':
      return has && r.values.includes(v!);
    case 'notEquals':
    case 'notIn':
      return !has || !r.values.includes(v!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      const bound = Number(r.values[0]);
      return r.operator === 'gt' ? n > bound : n < bound;
    }
  }
}

export function matchesSelector(labels: Record<string, string>, requirements: SelectorRequirement[]): boolean {
  return requirements.every((r) => matchesRequirement(labels, r));
}
