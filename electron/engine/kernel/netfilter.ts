/**
 * Netfilter rules as `iptables-save` / `ip6tables-save` print them, parsed into table → chains and rules (with each
 * rule's comment and target), and printed back the way `iptables -t <table> -S` lists a table. One save per family
 * reads every table at once; the -S form is what the live view, the lab and the leak checker compare and show.
 */
import type { IpFamily, NetfilterChain, NetfilterRule, NetfilterTable } from './types';

/**
 * The built-in chains of each table, in the order the tools list them. A table no rule ever used is absent from a
 * save (nf_tables creates tables on first use), while `-S` still lists its built-in chains with their default
 * ACCEPT policy: ruleSpecLines does the same, so an absent table reads as it always did.
 */
export const BUILTIN_CHAINS: Record<string, string[]> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** Splits a rule back into argv: words, and double-quoted strings with `\"` escapes (how comments are printed). */
export function ruleWords(spec: string): string[] {
  return [...spec.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/\\(["\\])/g, '$1') : m[2]!));
}

function parseRule(spec: string): NetfilterRule {
  const words = ruleWords(spec);
  const args = words.slice(2);
  const after = (flag: string) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const rule: NetfilterRule = { chain: words[1] ?? '', spec, args };
  const comment = after('--comment');
  if (comment !== undefined) rule.comment = comment;
  const target = after('-j') ?? after('-g');
  if (target !== undefined) rule.target = target;
  return rule;
}

/** `iptables-save` (or `ip6tables-save`) output, every table in it. Counters, comments and COMMIT lines are skipped. */
export function parseSave(text: string, family: IpFamily): NetfilterTable[] {
  const tables: NetfilterTable[] = [];
  let current: NetfilterTable | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (line.startsWith('*')) {
      current = { family, name: line.slice(1).trim(), chains: [], rules: [] };
      tables.push(current);
    } else if (!current || line === '' || line.startsWith('#')) {
      continue;
    } else if (line === 'COMMIT') {
      current = undefined;
    } else if (line.startsWith(':')) {
      // `:NAME POLICY [packets:bytes]`, policy `-` for a user-defined chain
      const [name = '', policy = '-'] = line.slice(1).split(/\s+/);
      const chain: NetfilterChain = { name };
      if (policy !== '-') chain.policy = policy;
      current.chains.push(chain);
    } else if (line.startsWith('-A ')) {
      current.rules.push(parseRule(line));
    }
  }
  return tables;
}

/**
 * A table as `iptables -t <table> -S` lists it: `-P` per built-in chain, `-N` per user-defined chain, then every
 * rule in chain order. `tables` holds one family's tables; a table not among them lists its default policies.
 */
export function ruleSpecLines(tables: NetfilterTable[], table: string): string[] {
  const t = tables.find((x) => x.name === table);
  if (!t) return (BUILTIN_CHAINS[table] ?? []).map((c) => `-P ${c} ACCEPT`);
  return [...t.chains.map((c) => (c.policy !== undefined ? `-P ${c.name} ${c.policy}` : `-N ${c.name}`)), ...t.rules.map((r) => r.spec)];
}

/** The tables of one family. */
export function tablesOf(tables: NetfilterTable[], family: IpFamily): NetfilterTable[] {
  return tables.filter((t) => t.family === family);
}
