/**
 * Per-plugin diff of two runs (or a run and a live pod's recorded ADD): each side's run-specific names are replaced by
 * placeholders first (container id, netns, veths, MACs, pod IPs, chain hashes; names.ts, the same way for both
 * sides), then stdin and result are compared as JSON (path by path), stderr and exit code as values, and the kernel
 * facts each created as sets. A fact one side created and the other found already there (a bridge an earlier run
 * left, as the bridge plugin does by design) is not a difference: it is listed as having existed before that run.
 */
import type {
  LabDiff,
  LabExistedBefore,
  LabKernelItem,
  LabPluginDiff,
  LabPluginTrace,
  LabRecordedAdd,
  LabRun,
  LabValueChange,
} from '../../../shared/domain/lab';
import { listNamesFromTraces, normalize, placeholderTokens } from './names';
import { onBridge } from './verdict';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A structural JSON diff: changed leaves (and whole added/removed subtrees) with dotted paths. */
export function jsonDiff(a: unknown, b: unknown, path: string[] = [], out: LabValueChange[] = []): LabValueChange[] {
  const at = path.join('.');
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in b)) out.push({ path: [...path, k].join('.'), a: a[k], change: 'removed' });
      else if (!(k in a)) out.push({ path: [...path, k].join('.'), b: b[k], change: 'added' });
      else jsonDiff(a[k], b[k], [...path, k], out);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= b.length) out.push({ path: [...path, String(i)].join('.'), a: a[i], change: 'removed' });
      else if (i >= a.length) out.push({ path: [...path, String(i)].join('.'), b: b[i], change: 'added' });
      else jsonDiff(a[i], b[i], [...path, String(i)], out);
    }
    return out;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path: at, a, b, change: 'changed' });
  return out;
}

function parseOrText(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export interface DiffSide {
  kind: 'run' | 'sandbox';
  id: string;
  label: string;
  plugins: LabPluginTrace[];
  tokens: Record<string, string>;
  result?: unknown;
  kernelCreated?: LabKernelItem[];
  leftAfterDel?: LabKernelItem[];
  /** a run's bridges as they were before its ADD (undefined on records from before it was kept) */
  existedBefore?: LabKernelItem[];
  /** rebuilt from libcni's cache (this entry): each plugin's stdin without prevResult, and the final result only */
  fromCache?: string;
}

/** A live pod's recorded ADD, for diffing a run against it. */
export type RecordedAdd = LabRecordedAdd;

export function runSide(run: LabRun): DiffSide {
  return {
    kind: 'run',
    id: run.id,
    label: `run ${run.id} (${run.name})`,
    plugins: run.plugins,
    // from the traces, as for a pod, so records written before the naming changed compare the same way
    tokens: placeholderTokens(run.plugins, run),
    result: run.result,
    kernelCreated: run.kernelCreated,
    leftAfterDel: run.leftAfterDel,
    ...(run.existedBefore ? { existedBefore: run.existedBefore } : {}),
  };
}

export function sandboxSide(rec: RecordedAdd): DiffSide {
  return {
    kind: 'sandbox',
    id: rec.id,
    label: `pod ${rec.name || rec.id.slice(0, 13)}`,
    plugins: rec.plugins,
    tokens: placeholderTokens(rec.plugins, { containerId: rec.id, netns: rec.netns ?? '' }),
    result: rec.result,
    ...(rec.fromCache !== undefined && { fromCache: rec.fromCache }),
  };
}

/** stdin without prevResult: a side rebuilt from libcni's cache has none to compare (only the final result is kept) */
function withoutPrevResult(x: unknown): unknown {
  if (!isObj(x)) return x;
  const { prevResult: _drop, ...rest } = x;
  return rest;
}

function normalizedJson(text: string, tokens: Record<string, string>): unknown {
  return parseOrText(normalize(text, tokens));
}

const key = (p: LabPluginTrace) => `${p.phase}#${p.index}`;

/**
 * A Go panic's stack trace carries the run's pointers and program counters (`main.cmdCheck(0xc0000c4770)`,
 * `pc=0x536ff6`, `+0x2d6`): the same panic prints other numbers in every run, so they are not a difference. Only a
 * text that is such a trace is touched.
 */
export function goPanicNoise(stderr: string): string {
  if (!/^panic: /m.test(stderr) || !/^goroutine \d+ \[/m.test(stderr)) return stderr;
  return stderr.replace(/0x[0-9a-f]+/gi, '0x…').replace(/\{0x…(?:, 0x…)*\}/g, '{…}');
}

export function diffPlugins(a: DiffSide, b: DiffSide, phases?: Set<string>): LabPluginDiff[] {
  const pick = (s: DiffSide) => {
    const m = new Map<string, LabPluginTrace>();
    for (const p of s.plugins) if (!phases || phases.has(p.phase)) m.set(key(p), p); // a retried exec: the last one counts
    return m;
  };
  const ma = pick(a);
  const mb = pick(b);
  const order = [...new Set([...ma.keys(), ...mb.keys()])];
  return order.map((k) => {
    const pa = ma.get(k);
    const pb = mb.get(k);
    const ref = (pa ?? pb)!;
    // a side from libcni's cache knows each plugin's stdin (less prevResult) and nothing of its output
    const cached = a.fromCache !== undefined || b.fromCache !== undefined;
    const stdinOf = (p: LabPluginTrace | undefined, side: DiffSide) => {
      const v = p ? normalizedJson(p.stdin, side.tokens) : undefined;
      return cached ? withoutPrevResult(v) : v;
    };
    const stdin = jsonDiff(stdinOf(pa, a), stdinOf(pb, b));
    const result = cached
      ? []
      : jsonDiff(pa ? normalizedJson(pa.stdout, a.tokens) : undefined, pb ? normalizedJson(pb.stdout, b.tokens) : undefined);
    const stderrA = pa && !cached ? goPanicNoise(normalize(pa.stderr, a.tokens)) : '';
    const stderrB = pb && !cached ? goPanicNoise(normalize(pb.stderr, b.tokens)) : '';
    const d: LabPluginDiff = {
      phase: ref.phase,
      index: ref.index,
      type: pa && pb && pa.type !== pb.type ? `${pa.type} → ${pb.type}` : ref.type,
      present: pa && pb ? 'both' : pa ? 'a' : 'b',
      stdin,
      result,
      durationMs: { a: pa?.durationMs, b: pb?.durationMs },
      same: false,
    };
    if (stderrA !== stderrB) d.stderr = { a: stderrA, b: stderrB };
    if (!cached && (pa?.exitCode ?? null) !== (pb?.exitCode ?? null)) d.exitCode = { a: pa?.exitCode ?? null, b: pb?.exitCode ?? null };
    d.same = d.present === 'both' && stdin.length === 0 && result.length === 0 && !d.stderr && !d.exitCode && pa!.type === pb!.type;
    return d;
  });
}

const itemKey = (i: LabKernelItem) => `${i.kind} ${i.what}`;
const normalizeItems = (items: LabKernelItem[], tokens: Record<string, string>) =>
  items.map((i) => ({ kind: i.kind, what: normalize(i.what, tokens) }));

function setDiff(a: LabKernelItem[], ta: Record<string, string>, b: LabKernelItem[], tb: Record<string, string>) {
  const na = normalizeItems(a, ta);
  const nb = normalizeItems(b, tb);
  const sa = new Set(na.map(itemKey));
  const sb = new Set(nb.map(itemKey));
  return { onlyA: na.filter((i) => !sb.has(itemKey(i))), onlyB: nb.filter((i) => !sa.has(itemKey(i))) };
}

/** which (normalised) facts were on the host before this side's ADD */
function foundBefore(side: DiffSide): (i: LabKernelItem) => boolean {
  if (side.existedBefore) {
    const keys = new Set(normalizeItems(side.existedBefore, side.tokens).map(itemKey));
    return (i) => keys.has(itemKey(i));
  }
  // an older record: a bridge the run attached to without creating it was there before the run
  const created = new Set((side.kernelCreated ?? []).filter((i) => i.kind === 'link').map((i) => i.what.split(' ')[0]));
  const found = listNamesFromTraces(side.plugins).bridges.filter((b) => !created.has(b));
  return (i) => onBridge(i.kind, i.what, found);
}

/** kernel facts created by one side only, less those the other side found already there */
function kernelDiff(a: DiffSide, b: DiffSide): NonNullable<LabDiff['kernel']> {
  const { onlyA, onlyB } = setDiff(a.kernelCreated!, a.tokens, b.kernelCreated!, b.tokens);
  const existedBefore: LabExistedBefore[] = [];
  const split = (items: LabKernelItem[], creator: DiffSide, other: DiffSide, createdBy: 'a' | 'b') => {
    const found = foundBefore(other);
    return items.filter((i) => {
      if (!found(i)) return true;
      const why = `existed before ${other.label}: ${creator.label} created it, and the bridge plugin keeps its bridge for other attachments`;
      existedBefore.push({ ...i, createdBy, why });
      return false;
    });
  };
  const out = { onlyA: split(onlyA, a, b, 'a'), onlyB: split(onlyB, b, a, 'b') };
  return existedBefore.length > 0 ? { ...out, existedBefore } : out;
}

export function diffSides(a: DiffSide, b: DiffSide): LabDiff {
  const notes: string[] = [];
  const live = a.kind === 'sandbox' || b.kind === 'sandbox';
  // a live pod has only its ADD recorded
  const plugins = diffPlugins(a, b, live ? new Set(['ADD']) : undefined);
  if (live)
    notes.push(
      'a live pod keeps only its ADD trace: CHECK and DEL are compared between runs only, and its kernel state was not snapshotted',
    );
  for (const side of [a, b])
    if (side.fromCache !== undefined)
      notes.push(
        `${side.label} is rebuilt from libcni's cache (${side.fromCache}): each plugin's stdin from the cached conflist, CNI_ARGS and capability args, and the ADD's final result; libcni keeps no plugin's own output, prevResult, stderr or exit code, so those are not compared`,
      );
  const out: LabDiff = {
    a: { kind: a.kind, id: a.id, label: a.label },
    b: { kind: b.kind, id: b.id, label: b.label },
    plugins,
    result: jsonDiff(
      a.result === undefined ? undefined : parseOrText(normalize(JSON.stringify(a.result), a.tokens)),
      b.result === undefined ? undefined : parseOrText(normalize(JSON.stringify(b.result), b.tokens)),
    ),
    notes,
  };
  if (a.kernelCreated && b.kernelCreated) out.kernel = kernelDiff(a, b);
  if (a.leftAfterDel && b.leftAfterDel) out.leftAfterDel = setDiff(a.leftAfterDel, a.tokens, b.leftAfterDel, b.tokens);
  const ipsA = Object.entries(a.tokens)
    .filter(([, v]) => v.startsWith('<pod-ip'))
    .map(([k]) => k);
  const ipsB = Object.entries(b.tokens)
    .filter(([, v]) => v.startsWith('<pod-ip'))
    .map(([k]) => k);
  if (ipsA.join() !== ipsB.join())
    notes.push(`pod addresses are compared as placeholders: a got ${ipsA.join(', ') || 'none'}, b got ${ipsB.join(', ') || 'none'}`);
  return out;
}
