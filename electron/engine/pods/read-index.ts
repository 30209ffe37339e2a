/**
 * The read side of the store, kept current by every save and delete so that status and list never rebuild what did
 * not change (docs/semantics.md#status-and-list):
 *  - the list view (SandboxSummary) and status view of each sandbox, built once per saved version;
 *  - ids sorted for prefix lookup (binary search: O(log n + matches), as containerd's truncindex answers);
 *  - ids by CRI state and by label pair, so a filtered list touches only what it returns;
 *  - every id in list order (newest first), so an unfiltered list is one pass with no sort.
 * Views are shared, frozen-by-convention objects: callers copy before changing anything.
 */
import { toCriState, type SandboxState, type SandboxStatus, type SandboxSummary } from '../../../shared/domain/sandbox';
import { toCniPortMappings } from '../../../shared/domain/portmap';
import { resolveIdPrefix } from './id-index';
import type { SandboxRecord } from './record';
import { toStatus, toSummary } from './view';

interface Entry {
  rec: SandboxRecord;
  summary?: SandboxSummary;
  status?: SandboxStatus;
  /** what the indexes hold for this id, to unindex exactly that */
  state: SandboxState;
  labelKeys: string[];
  order: readonly [bigint, string];
}

const labelKey = (k: string, v: string) => `${k}\u0000${v}`;

/** newest first; equal times by id, as the list has always been ordered */
function before(a: readonly [bigint, string], b: readonly [bigint, string]): boolean {
  return a[0] === b[0] ? a[1] < b[1] : a[0] > b[0];
}

function createdKey(rec: SandboxRecord): readonly [bigint, string] {
  let ns = 0n;
  try {
    ns = BigInt(rec.createdAtNs);
  } catch {
    // an unparsable time sorts last rather than breaking the list
  }
  return [ns, rec.id];
}

/** Index of the first element of the sorted array that is not before `x`. */
function lowerBound<T>(arr: readonly T[], less: (e: T) => boolean): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (less(arr[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SandboxReadIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly sortedIds: string[] = [];
  private readonly listOrder: Array<{ key: readonly [bigint, string]; id: string }> = [];
  private readonly byState = new Map<SandboxState, Set<string>>();
  private readonly byLabel = new Map<string, Set<string>>();
  /** sandboxes whose config maps a host port: the only ones a host-port clash can involve */
  private readonly withHostPorts = new Set<string>();

  get size(): number {
    return this.entries.size;
  }

  /** After a save: drop the cached views and re-index what the record now says. */
  upsert(rec: SandboxRecord): void {
    const old = this.entries.get(rec.id);
    if (old) this.unindex(rec.id, old);
    else {
      this.sortedIds.splice(
        lowerBound(this.sortedIds, (x) => x < rec.id),
        0,
        rec.id,
      );
    }
    const entry: Entry = {
      rec,
      state: toCriState(rec.state),
      labelKeys: Object.entries(rec.config.labels ?? {}).map(([k, v]) => labelKey(k, v)),
      order: createdKey(rec),
    };
    this.entries.set(rec.id, entry);
    if (mapsHostPort(rec)) this.withHostPorts.add(rec.id);
    else this.withHostPorts.delete(rec.id);
    add(this.byState, entry.state, rec.id);
    for (const k of entry.labelKeys) add(this.byLabel, k, rec.id);
    this.listOrder.splice(
      lowerBound(this.listOrder, (x) => before(x.key, entry.order)),
      0,
      { key: entry.order, id: rec.id },
    );
  }

  delete(id: string): void {
    const old = this.entries.get(id);
    if (!old) return;
    this.unindex(id, old);
    this.entries.delete(id);
    this.withHostPorts.delete(id);
    const i = lowerBound(this.sortedIds, (x) => x < id);
    if (this.sortedIds[i] === id) this.sortedIds.splice(i, 1);
  }

  private unindex(id: string, e: Entry): void {
    remove(this.byState, e.state, id);
    for (const k of e.labelKeys) remove(this.byLabel, k, id);
    const i = lowerBound(this.listOrder, (x) => before(x.key, e.order));
    for (let j = i; j < this.listOrder.length; j++) {
      if (this.listOrder[j]!.id === id) {
        this.listOrder.splice(j, 1);
        break;
      }
      if (before(e.order, this.listOrder[j]!.key)) break;
    }
  }

  holdsHostPorts(id: string): boolean {
    return this.withHostPorts.has(id);
  }

  /** the records of every sandbox that maps a host port, whatever its state */
  hostPortHolders(): SandboxRecord[] {
    return [...this.withHostPorts].map((id) => this.entries.get(id)!.rec);
  }

  summary(id: string): SandboxSummary | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    e.summary ??= toSummary(e.rec);
    return e.summary;
  }

  status(id: string): SandboxStatus | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    e.status ??= toStatus(e.rec, e.rec.netnsPath === undefined || e.rec.netnsClosed === true);
    return e.status;
  }

  /** Every id starting with `prefix`, in id order. */
  idsWithPrefix(prefix: string): string[] {
    const out: string[] = [];
    for (let i = lowerBound(this.sortedIds, (x) => x < prefix); i < this.sortedIds.length && this.sortedIds[i]!.startsWith(prefix); i++)
      out.push(this.sortedIds[i]!);
    return out;
  }

  /**
   * A full id or any unique prefix (crictl shows 13 characters), as containerd's truncindex resolves them: undefined
   * when nothing matches; an empty or ambiguous prefix is InvalidArgument.
   */
  resolve(prefix: string): string | undefined {
    // the same rule and wording as every other id lookup, over only the ids that share the prefix
    return resolveIdPrefix(this.idsWithPrefix(prefix), prefix);
  }

  /**
   * Ids that can match a filter, newest first: the smallest of the id-prefix, state and label sets is walked and the
   * others are checked by lookup; no filter walks the precomputed list order.
   */
  candidates(filter: { idPrefix?: string; state?: SandboxState; labels?: Record<string, string> }): string[] {
    const sets: Array<Set<string>> = [];
    if (filter.idPrefix) sets.push(new Set(this.idsWithPrefix(filter.idPrefix)));
    if (filter.state) sets.push(this.byState.get(filter.state) ?? new Set());
    for (const [k, v] of Object.entries(filter.labels ?? {})) sets.push(this.byLabel.get(labelKey(k, v)) ?? new Set());
    if (sets.length === 0) return this.listOrder.map((x) => x.id);
    sets.sort((a, b) => a.size - b.size);
    const [smallest, ...rest] = sets;
    const ids = [...smallest!].filter((id) => rest.every((s) => s.has(id)));
    return ids
      .map((id) => this.entries.get(id)!)
      .sort((a, b) => (before(a.order, b.order) ? -1 : 1))
      .map((e) => e.rec.id);
  }
}

/** a mapping portmap would install (the same conversion the clash check uses) */
function mapsHostPort(rec: SandboxRecord): boolean {
  return toCniPortMappings(rec.config.port_mappings ?? []).length > 0;
}

function add(m: Map<string, Set<string>>, k: string, id: string): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(id);
}

function remove(m: Map<string, Set<string>>, k: string, id: string): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(id);
  if (s.size === 0) m.delete(k);
}
