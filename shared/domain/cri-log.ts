/**
 * The CRI container log format (kubelet pkg/kubelet/kuberuntime/logs/logs.go; docs/semantics.md#container-logs):
 * one record a line, `<RFC3339Nano time> <stdout|stderr> <F|P> <text>`. A line longer than the writer's buffer is cut
 * into P(artial) records followed by one F(ull) record; a reader joins them, per stream, into one log line. Pure: no
 * DOM, no Node (the renderer and the engine both parse it).
 */

export type LogStream = 'stdout' | 'stderr';

export interface CriLogRecord {
  /** the RFC3339Nano time as written */
  time: string;
  stream: LogStream;
  partial: boolean;
  text: string;
}

/** a log line with its P records joined; `time` is the first record's (kubelet keeps the first one too) */
export interface LogEntry {
  time: string;
  stream: LogStream;
  text: string;
}

const RECORD = /^(\S+) (stdout|stderr) ([FP])(?: (.*))?$/s;

/** One record (without its newline); undefined for a line that is not a CRI record (kubelet skips those too). */
export function parseCriLogLine(line: string): CriLogRecord | undefined {
  const m = RECORD.exec(line);
  if (!m) return undefined;
  if (rfc3339ToNs(m[1]!) === undefined) return undefined;
  return { time: m[1]!, stream: m[2] as LogStream, partial: m[3] === 'P', text: m[4] ?? '' };
}

const TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** Nanoseconds since the epoch of an RFC3339(Nano) time, or undefined when it is not one. */
export function rfc3339ToNs(text: string): bigint | undefined {
  const m = TIME.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0') || '0');
}

/**
 * Joins P records into lines, one buffer per stream (stdout's partial line never swallows a stderr record). A P
 * record still pending when the input ends is not a line yet; `flush` hands it out as one (the writer ended).
 */
export class CriLogJoiner {
  private readonly pending: Partial<Record<LogStream, { time: string; parts: string[] }>> = {};

  /** the finished line this record completes, if any */
  push(rec: CriLogRecord): LogEntry | undefined {
    const p = this.pending[rec.stream];
    if (rec.partial) {
      if (p) p.parts.push(rec.text);
      else this.pending[rec.stream] = { time: rec.time, parts: [rec.text] };
      return undefined;
    }
    delete this.pending[rec.stream];
    return p
      ? { time: p.time, stream: rec.stream, text: p.parts.join('') + rec.text }
      : { time: rec.time, stream: rec.stream, text: rec.text };
  }

  /** partial lines left over, oldest first */
  flush(): LogEntry[] {
    const out: LogEntry[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      const p = this.pending[stream];
      if (p) out.push({ time: p.time, stream, text: p.parts.join('') });
      delete this.pending[stream];
    }
    return out.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  }
}

/** Every line of a chunk of log text, joined; `rest` is an unfinished last line the caller keeps for the next chunk. */
export function parseCriLog(text: string, joiner = new CriLogJoiner()): { entries: LogEntry[]; rest: string } {
  const lines = text.split('\n');
  const rest = lines.pop() ?? '';
  const entries: LogEntry[] = [];
  for (const line of lines) {
    const rec = parseCriLogLine(line);
    if (!rec) continue;
    const e = joiner.push(rec);
    if (e) entries.push(e);
  }
  return { entries, rest };
}

export interface LogFilter {
  /** only lines at or after this time (RFC3339, ns precision) */
  sinceNs?: bigint;
  /** only this stream (default both) */
  stream?: LogStream | 'all';
}

export function matchesLogFilter(e: LogEntry, f: LogFilter): boolean {
  if (f.stream && f.stream !== 'all' && e.stream !== f.stream) return false;
  if (f.sinceNs !== undefined) {
    const t = rfc3339ToNs(e.time);
    if (t === undefined || t < f.sinceNs) return false;
  }
  return true;
}

/**
 * A log time as kubelet prints it (`2006-01-02T15:04:05.000000000Z07:00`, in UTC): nine digits and `Z` whatever offset
 * form the writer used (conmon writes `+00:00`). A time that does not parse is printed as written.
 */
export function formatLogTime(time: string): string {
  const ns = rfc3339ToNs(time);
  if (ns === undefined) return time;
  const s = ns / 1_000_000_000n;
  return `${new Date(Number(s) * 1000).toISOString().slice(0, 19)}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}Z`;
}

/** kubectl/crictl's output line: the text, with the time in front when asked for */
export function formatLogEntry(e: LogEntry, timestamps: boolean): string {
  return `${timestamps ? `${formatLogTime(e.time)} ` : ''}${e.text}\n`;
}

/**
 * crictl logs --since: an RFC3339 time, or a duration back from `nowMs` (Go's time.ParseDuration units: h, m, s,
 * ms, us/µs, ns, combinable as in "1h30m"). Undefined when it is neither.
 */
export function parseSince(text: string, nowMs: number): bigint | undefined {
  const abs = rfc3339ToNs(text);
  if (abs !== undefined) return abs;
  const units: Record<string, bigint> = {
    h: 3_600_000_000_000n,
    m: 60_000_000_000n,
    s: 1_000_000_000n,
    ms: 1_000_000n,
    us: 1000n,
    µs: 1000n,
    ns: 1n,
  };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  let ns = 0n;
  for (const p of parts) {
    const [whole, frac = ''] = p[1]!.split('.');
    const unit = units[p[2]!]!;
    ns += BigInt(whole!) * unit + (frac ? (BigInt(frac.slice(0, 9).padEnd(9, '0')) * unit) / 1_000_000_000n : 0n);
  }
  return BigInt(nowMs) * 1_000_000n - ns;
}
