/** The lifecycle step recorder: appends steps to a sandbox's or a container's step list (the record's `trace` field, kept by that name on disk and on the wire) and hands each one on (a sandbox streams it as a progress event). Not the packet trace (trace/). */
import { serializeError } from '../../../shared/domain/errors';
import type { TraceEntry, TracePhase } from '../../../shared/domain/sandbox';
import type { StepReport } from './step-report';

export class StepRecorder {
  constructor(
    private readonly rec: { trace: TraceEntry[] },
    private readonly phase: TracePhase,
    private readonly onEntry: (entry: TraceEntry) => void,
  ) {}

  add(s: StepReport): TraceEntry {
    const entry: TraceEntry = {
      seq: this.rec.trace.length,
      phase: this.phase,
      step: s.step,
      label: s.label,
      startedAt: s.startedAt,
      durationMs: Math.round(s.durationMs * 1000) / 1000,
      ok: s.ok,
    };
    if (s.error !== undefined) entry.error = serializeError(s.error);
    if (s.plugin) entry.plugin = s.plugin;
    if (s.detail) entry.detail = s.detail;
    this.rec.trace.push(entry);
    this.onEntry(entry);
    return entry;
  }

  /** Times fn and records it as one step; rethrows its error after recording it. */
  async step<T>(step: string, label: string, fn: () => Promise<T>, detail?: (v: T) => Record<string, unknown>): Promise<T> {
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    try {
      const v = await fn();
      this.add({ step, label, startedAt, durationMs: performance.now() - t0, ok: true, detail: detail?.(v) });
      return v;
    } catch (error) {
      this.add({ step, label, startedAt, durationMs: performance.now() - t0, ok: false, error });
      throw error;
    }
  }
}
