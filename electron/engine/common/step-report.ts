import type { PluginCall } from '../../../shared/domain/sandbox';

/** One finished step as a layer reports it (CNI exec, runc command, engine step); the trace turns it into a TraceEntry. */
export interface StepReport {
  step: string;
  label: string;
  startedAt: string;
  durationMs: number;
  ok: boolean;
  error?: unknown;
  plugin?: PluginCall;
  detail?: Record<string, unknown>;
}
