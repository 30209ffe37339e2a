/**
 * CHECK and STATUS reports from the manager's per-network outcomes: one shape for the engine's own pods and another
 * runtime's, each network with the plugin calls that ran for it.
 */
import { serializeError } from '../../../shared/domain/errors';
import type { CniCheckReport, CniStatusReport } from '../../../shared/domain/measure';
import type { TraceEntry } from '../../../shared/domain/sandbox';
import type { CniCallRecord, CniVerbOutcome } from './types';

/** the plugin calls of a verb kept apart from any pod's trace, as entries of phase "check" */
export function cniCallEntries(): { entries: TraceEntry[]; record: (r: CniCallRecord) => void } {
  const entries: TraceEntry[] = [];
  const record = (r: CniCallRecord) =>
    entries.push({
      seq: entries.length,
      phase: 'check',
      step: r.step,
      label: r.label,
      startedAt: r.startedAt,
      durationMs: Math.round(r.durationMs * 1000) / 1000,
      ok: r.ok,
      ...(r.error !== undefined ? { error: serializeError(r.error) } : {}),
      ...(r.plugin ? { plugin: r.plugin } : {}),
      ...(r.detail ? { detail: r.detail } : {}),
    });
  return { entries, record };
}

const networkOf = (e: TraceEntry) => e.plugin?.network ?? (e.detail as { network?: string } | undefined)?.network;

export function checkReportNetworks(outcomes: CniVerbOutcome[], entries: TraceEntry[]): CniCheckReport['networks'] {
  return outcomes.map((o) => ({
    network: o.network,
    ifName: o.ifName,
    cniVersion: o.cniVersion,
    outcome: o.outcome,
    message: o.message,
    ...(o.error !== undefined ? { error: serializeError(o.error) } : {}),
    ...(o.knownDefect ? { knownDefect: o.knownDefect } : {}),
    entries: entries.filter((e) => networkOf(e) === o.network),
  }));
}

export function statusReportNetworks(outcomes: CniVerbOutcome[], entries: TraceEntry[]): CniStatusReport['networks'] {
  return outcomes.map((o) => ({
    network: o.network,
    cniVersion: o.cniVersion,
    outcome: o.outcome,
    message: o.message,
    ...(o.error !== undefined ? { error: serializeError(o.error) } : {}),
    entries: entries.filter((e) => e.plugin?.network === o.network),
  }));
}
