/**
 * Measurements the engine takes on demand: throughput through the pod's real veth and the CNI CHECK /
 * STATUS verbs. Every report carries when it was measured, so a view never shows a verdict without its time.
 */
import type { SerializedError } from './errors';
import type { TraceEntry } from './trace';

export type ThroughputDirection = 'ingress' | 'egress';

/**
 * - shaped: past the burst, the measured rate is within ±20% of the rate the tbf applies
 * - notShaped: past the burst, traffic still ran clearly faster than the limit
 * - burstNotPassed: the transfer ended before the tbf burst was used up, so the limit never engaged
 * - noLimit: nothing is shaped in this direction (no annotation, no tbf): the figure is the veth's raw speed
 * - failed: the transfer could not be run
 */
export type ThroughputVerdict = 'shaped' | 'notShaped' | 'burstNotPassed' | 'noLimit' | 'failed';

export interface ThroughputDirectionReport {
  direction: ThroughputDirection;
  /** bits/s the pod's annotation asks for (from the configuration) */
  requestedBps?: number;
  /** bits/s of the tbf qdisc read from the kernel before the transfer */
  appliedBps?: number;
  /** tbf burst in bytes, read from the kernel (`tc -j qdisc show`) */
  burstBytes?: number;
  /** the device carrying that tbf (host veth for ingress, the ifb for egress) */
  device?: string;
  /** bits/s measured by the receiver on the window after the burst was consumed (or the whole transfer without one) */
  measuredBps?: number;
  /** bits/s over the whole transfer, burst included: what a short flow sees */
  overallBps: number;
  totalBytes: number;
  elapsedMs: number;
  /** the part of the transfer the measured rate is computed on, in ms since the first byte */
  window?: { startMs: number; endMs: number };
  /**
   * how well measuredBps is known: the relative half-width of its 95% interval (0.03 = ±3%), from the spread of the
   * rate over parts of the window. The transfer stops once this is within ±5% (it may run to its bound otherwise).
   */
  precision?: number;
  pastBurst: boolean;
  /** set when the burst lets short flows through unshaped: flows smaller than this many bytes never see the limit */
  unshapedBelowBytes?: number;
  verdict: ThroughputVerdict;
  note: string;
  /** who sent and who received, e.g. "host → 10.88.0.5:41234 (pod netns)" */
  path: string;
  error?: SerializedError;
}

export interface ThroughputReport {
  id: string;
  /** when the measurement started (RFC 3339) */
  measuredAt: string;
  /** the time bound per direction */
  durationMs: number;
  ingress: ThroughputDirectionReport;
  egress: ThroughputDirectionReport;
}

export interface ThroughputOptions {
  /** time bound per direction (default 5000, at most 20000) */
  durationMs?: number;
  /** only one direction (default both) */
  directions?: ThroughputDirection[];
}

export type ThroughputProgress = { direction: ThroughputDirection; elapsedMs: number; bytes: number; durationMs: number };

const BYTE_UNITS: Array<[number, string]> = [
  [1e12, 'TB'],
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'kB'],
];

/**
 * A size in bytes, one way wherever a size is shown (CLI, engine notes, the app): decimal SI units (1 MB = 10⁶
 * bytes, as the rates' Mbit/s and tc mean them; never MiB), three significant digits. 512 ⇒ "512 B",
 * 12500 ⇒ "12.5 kB", 193_000_000 ⇒ "193 MB".
 */
export function formatBytes(bytes: number): string {
  for (const [scale, unit] of BYTE_UNITS) {
    if (bytes >= scale) return `${Number((bytes / scale).toPrecision(3))} ${unit}`;
  }
  return `${bytes} B`;
}

/** The name the engine's notes use (throughput/measure.ts): the same decimal format. */
export const formatMegabytes = formatBytes;

export type CniVerbOutcome = 'passed' | 'failed' | 'notSupported' | 'disabled';

export interface CniCheckNetworkReport {
  network: string;
  ifName: string;
  cniVersion: string;
  outcome: CniVerbOutcome;
  /** why CHECK did not run, or what failed */
  message: string;
  error?: SerializedError;
  /** a plugin's CHECK failed with a known defect of its release: shown as a warning, never as the network's failure */
  knownDefect?: { type: string; index: number; reference: string; explanation: string; version: string };
  /** the trace entries this CHECK added (one per plugin exec + the network step) */
  entries: TraceEntry[];
}

export interface CniCheckReport {
  id: string;
  measuredAt: string;
  ok: boolean;
  networks: CniCheckNetworkReport[];
}

export interface CniStatusNetworkReport {
  network: string;
  cniVersion: string;
  outcome: CniVerbOutcome;
  message: string;
  error?: SerializedError;
  entries: TraceEntry[];
}

export interface CniStatusReport {
  measuredAt: string;
  ok: boolean;
  networks: CniStatusNetworkReport[];
}
