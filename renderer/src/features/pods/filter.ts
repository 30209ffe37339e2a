/** Pure filtering and sorting of the pods table (newest first, like crictl pods). */
import type { SandboxSummary } from '../../../../shared/domain/sandbox';
import { matchesSelector, parseLabelSelector } from '../../../../shared/domain/label-selector';
import type { PodFilters } from './store';

/** Kubernetes selector syntax; a selector with a syntax error matches nothing (the toolbar shows the error). */
export function matchesLabel(labels: Record<string, string>, selector: string): boolean {
  const parsed = parseLabelSelector(selector);
  return parsed.ok && matchesSelector(labels, parsed.requirements);
}

/** the syntax error of the label selector, or undefined when it parses */
export function labelSelectorError(selector: string): string | undefined {
  const parsed = parseLabelSelector(selector);
  return parsed.ok ? undefined : `${parsed.error} (at column ${parsed.position + 1})`;
}

export function filterPods(pods: SandboxSummary[], f: PodFilters): SandboxSummary[] {
  return filterIndex(buildPodIndex(pods), f);
}

/**
 * The table's order: newest first. createdAtNs is a decimal string of nanoseconds; comparing by length, then
 * lexically, is the numeric order without a BigInt per comparison.
 */
function newestFirst(a: SandboxSummary, b: SandboxSummary): number {
  const x = a.createdAtNs || '0';
  const y = b.createdAtNs || '0';
  if (x.length !== y.length) return y.length - x.length;
  return x < y ? 1 : x > y ? -1 : 0;
}

/** the lowercase text a row is searched by (id, name, namespace, IPs, labels as k=v), one line per field */
function searchKey(p: SandboxSummary): string {
  return [p.id, p.metadata.name, p.metadata.namespace, p.ip, ...p.additionalIps, ...Object.entries(p.labels).map(([k, v]) => `${k}=${v}`)]
    .join('\n')
    .toLowerCase();
}

/** keys are per row object: a pushed delta replaces only the rows that changed, so only those are lowercased again */
const keyCache = new WeakMap<SandboxSummary, string>();
const keyOf = (p: SandboxSummary): string => {
  let k = keyCache.get(p);
  if (k === undefined) {
    k = searchKey(p);
    keyCache.set(p, k);
  }
  return k;
};

/**
 * The list sorted once with each row's search key beside it: a filter keystroke is one pass over precomputed
 * strings, never a re-sort or a re-lowercasing of unchanged data.
 */
export interface PodIndex {
  /** newest first */
  rows: SandboxSummary[];
  keys: string[];
}

export function buildPodIndex(pods: SandboxSummary[]): PodIndex {
  const rows = [...pods].sort(newestFirst);
  return { rows, keys: rows.map(keyOf) };
}

/**
 * The rows of the index that match, in index order. `narrowing` (the previous result, when the new filters only
 * add to the old text filter) lets a keystroke scan what is left instead of every row.
 */
export function filterIndex(
  index: PodIndex,
  f: PodFilters,
  narrowing?: { filters: PodFilters; shown: SandboxSummary[] },
): SandboxSummary[] {
  const text = f.text.trim().toLowerCase();
  const selector = f.label ? parseLabelSelector(f.label) : undefined;
  if (selector && !selector.ok) return [];
  if (!text && !f.namespace && !f.state && !selector) return index.rows;
  const out: SandboxSummary[] = [];
  if (narrowing && canNarrow(narrowing.filters, f)) {
    // the previous result is a subset of the index in index order; every row in it has a cached key
    for (const p of narrowing.shown) if (keyOf(p).includes(text)) out.push(p);
    return out;
  }
  const { rows, keys } = index;
  for (let i = 0; i < rows.length; i++) {
    const p = rows[i]!;
    if (f.namespace && p.metadata.namespace !== f.namespace) continue;
    if (f.state && p.state !== f.state) continue;
    if (text && !keys[i]!.includes(text)) continue;
    if (selector?.ok && !matchesSelector(p.labels, selector.requirements)) continue;
    out.push(p);
  }
  return out;
}

/**
 * A filter over one index that remembers its last answer, so typing more of the same text narrows the last result
 * (each keystroke scans fewer rows). Made once per index (a new list starts afresh).
 */
export function createIndexedFilter(index: PodIndex): (f: PodFilters) => SandboxSummary[] {
  let last: { filters: PodFilters; shown: SandboxSummary[] } | undefined;
  return (f) => {
    const shown = filterIndex(index, f, last);
    last = { filters: f, shown };
    return shown;
  };
}

/** only the text changed, and it still contains the previous text: the new result is inside the previous one */
function canNarrow(prev: PodFilters, next: PodFilters): boolean {
  const a = prev.text.trim().toLowerCase();
  const b = next.text.trim().toLowerCase();
  return prev.namespace === next.namespace && prev.state === next.state && prev.label === next.label && a !== b && b.includes(a);
}

export function namespacesOf(pods: SandboxSummary[]): string[] {
  return [...new Set(pods.map((p) => p.metadata.namespace))].sort();
}
