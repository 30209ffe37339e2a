/**
 * Semantics: docs/semantics.md#measurements.
 * The rate past the tbf burst, from the receiver's byte counts over time. A tbf bucket starts full, so the first
 * `burst` bytes leave at line speed; only what follows is shaped. The rate is taken on the window that starts once
 * the receiver has seen more than the burst (plus a short settling time for the queue the sender built meanwhile).
 */
import type { ThroughputVerdict } from '../../../shared/domain/measure';

export interface ByteSample {
  /** ms since the receiver's first byte */
  tMs: number;
  /** bytes received so far */
  bytes: number;
}

export interface RateInput {
  samples: ByteSample[];
  /** tbf burst in bytes; undefined when nothing shapes this direction */
  burstBytes?: number;
  /** the tbf rate (or, without one, the requested rate) in bits/s */
  limitBps?: number;
  /** time skipped after the burst is used up, for the queue built during the burst to drain (default 300 ms) */
  settleMs?: number;
  /** the shortest window a rate is reported on as "past the burst" (default 1000 ms) */
  minWindowMs?: number;
}

/** The precision a measurement stops at: the rate's 95% interval within ±5% of it (the verdict's tolerance is ±20%). */
export const TARGET_PRECISION = 0.05;
/** however precise, a rate is not reported on less than this much of the shaped flow */
export const MIN_PRECISE_WINDOW_MS = 500;
/** sub-windows the precision is estimated from */
const BATCHES = 5;

export interface RateResult {
  measuredBps?: number;
  overallBps: number;
  totalBytes: number;
  elapsedMs: number;
  window?: { startMs: number; endMs: number };
  pastBurst: boolean;
  /**
   * the measured rate's relative 95% half-width, from the spread of the rate over consecutive parts of the window
   * (batch means): 0.03 means the rate is known to ±3%. Undefined on a window too short to tell.
   */
  precision?: number;
}

/**
 * Batch-means precision of the rate on samples[from..]: the window cut into BATCHES parts by time, the rate of each,
 * and 2 × their standard error relative to the whole window's rate. TCP through a tbf saw-tooths (a drop, a pause),
 * so parts differ; the more of them average out, the narrower this gets.
 */
function batchPrecision(window: ByteSample[]): number | undefined {
  const first = window[0];
  const last = window[window.length - 1];
  if (!first || !last || window.length < 2 * BATCHES) return undefined;
  const span = last.tMs - first.tMs;
  if (span <= 0) return undefined;
  const at = (t: number) => window.reduce((best, s) => (Math.abs(s.tMs - t) < Math.abs(best.tMs - t) ? s : best), first);
  const rates: number[] = [];
  for (let k = 0; k < BATCHES; k++) {
    const a = at(first.tMs + (span * k) / BATCHES);
    const b = at(first.tMs + (span * (k + 1)) / BATCHES);
    if (b.tMs <= a.tMs) return undefined;
    rates.push(bps(b.bytes - a.bytes, b.tMs - a.tMs));
  }
  const whole = bps(last.bytes - first.bytes, span);
  if (whole <= 0) return undefined;
  const mean = rates.reduce((x, y) => x + y, 0) / BATCHES;
  const sd = Math.sqrt(rates.reduce((x, r) => x + (r - mean) ** 2, 0) / (BATCHES - 1));
  // a perfectly even flow still is not known better than to a tenth of a percent (clock and packet granularity)
  return Math.max((2 * sd) / Math.sqrt(BATCHES) / whole, 0.001);
}

const bps = (bytes: number, ms: number) => (ms > 0 ? (bytes * 8 * 1000) / ms : 0);

export function computeRate(input: RateInput): RateResult {
  const samples = [...input.samples].sort((a, b) => a.tMs - b.tMs);
  const last = samples[samples.length - 1] ?? { tMs: 0, bytes: 0 };
  const overall = { overallBps: bps(last.bytes, last.tMs), totalBytes: last.bytes, elapsedMs: last.tMs };
  const settle = input.settleMs ?? 300;
  const minWindow = input.minWindowMs ?? 1000;
  const windowFrom = (startMs: number) => {
    const i = samples.findIndex((s) => s.tMs >= startMs);
    const start = samples[i];
    if (!start || last.tMs - start.tMs <= 0) return undefined;
    return {
      start,
      rate: bps(last.bytes - start.bytes, last.tMs - start.tMs),
      len: last.tMs - start.tMs,
      precision: batchPrecision(samples.slice(i)),
    };
  };
  const precise = (w: { len: number; precision?: number }) =>
    w.len >= minWindow || (w.len >= MIN_PRECISE_WINDOW_MS && w.precision !== undefined && w.precision <= TARGET_PRECISION);
  const withPrecision = (w: { precision?: number }) => (w.precision === undefined ? {} : { precision: w.precision });
  if (input.burstBytes === undefined) {
    // nothing to get past: the second half is the steady state (slow start is over)
    const w = windowFrom(last.tMs / 2);
    return {
      ...overall,
      measuredBps: w?.rate ?? overall.overallBps,
      window: w && { startMs: w.start.tMs, endMs: last.tMs },
      pastBurst: true,
      ...(w ? withPrecision(w) : {}),
    };
  }
  // The knee is the first sample from which the receiver's rate has fallen to the limit and stays there on average.
  // Not "once `burst` bytes arrived": tbf charges whole frames (headers too) while the receiver counts payload, so
  // the bucket empties a few percent early; and a bucket still draining from an earlier transfer is not full at all.
  // The first 100 ms are skipped (TCP slow start is slow for reasons of its own). A flow that got past the whole
  // burst (plus what the bucket refilled meanwhile) still running fast is past the knee too: the limit is not holding.
  const limit = input.limitBps ?? 0;
  const perMs = limit / 8 / 1000;
  const rateBetween = (a: ByteSample, b: ByteSample) => bps(b.bytes - a.bytes, b.tMs - a.tMs);
  const kneeIndex = samples.findIndex(
    (s, i) =>
      s.tMs >= 100 && i + 1 < samples.length && rateBetween(s, samples[i + 1]!) <= limit * 1.5 && rateBetween(s, last) <= limit * 1.5,
  );
  const knee = kneeIndex >= 0 ? samples[kneeIndex] : samples.find((s) => s.bytes > input.burstBytes! + perMs * s.tMs);
  if (!knee) return { ...overall, pastBurst: false };
  const w = windowFrom(knee.tMs + settle);
  if (!w || !precise(w))
    return {
      ...overall,
      pastBurst: false,
      ...(w ? { measuredBps: w.rate, window: { startMs: w.start.tMs, endMs: last.tMs }, ...withPrecision(w) } : {}),
    };
  return { ...overall, measuredBps: w.rate, window: { startMs: w.start.tMs, endMs: last.tMs }, pastBurst: true, ...withPrecision(w) };
}

/**
 * Whether a transfer can stop now: its rate past the burst is known to TARGET_PRECISION on at least
 * MIN_PRECISE_WINDOW_MS of shaped flow (or, with nothing shaping it, on a second of steady state). A transfer that
 * never gets there runs to its time or byte bound as before.
 */
export function measuredEnough(input: RateInput): boolean {
  const r = computeRate(input);
  if (r.precision === undefined || r.precision > TARGET_PRECISION || !r.window) return false;
  if (input.burstBytes === undefined) return r.window.endMs - r.window.startMs >= 1000;
  return r.pastBurst;
}

/** ±20%: tbf shapes on whole packets and TCP saw-tooths, so a tighter bound would flag healthy limits. */
export const SHAPED_TOLERANCE = 0.2;

export function verdictFor(r: RateResult, limitBps: number | undefined): ThroughputVerdict {
  if (limitBps === undefined) return 'noLimit';
  if (!r.pastBurst || r.measuredBps === undefined) return 'burstNotPassed';
  return r.measuredBps <= limitBps * (1 + SHAPED_TOLERANCE) ? 'shaped' : 'notShaped';
}

/**
 * A flow of S bytes at line speed is never slowed while S ≤ burst (the bucket starts full). Reported when the
 * burst holds more than a second of traffic at the limit: then short transfers really do bypass it.
 */
export function unshapedBelow(burstBytes: number | undefined, limitBps: number | undefined): number | undefined {
  if (burstBytes === undefined || limitBps === undefined || limitBps <= 0) return undefined;
  return burstBytes > limitBps / 8 ? burstBytes : undefined;
}
