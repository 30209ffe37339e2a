/**
 * CNI CHECK for a sandbox and STATUS for the loaded networks, on demand. CHECK runs under the sandbox's lock with
 * the options ADD had (same CNI_ARGS and capability args, rebuilt from the stored config as containerd's
 * sandbox code does for every CNI call) and lands in the sandbox's trace, phase "check", like ADD/DEL.
 */
import { serializeError, PodscopeError } from '../../../shared/domain/errors';
import type { CniCheckReport, CniStatusReport } from '../../../shared/domain/measure';
import type { TraceEntry } from '../../../shared/domain/sandbox';
import type { CniCallRecord } from '../cni/types';
import { readyPod } from '../common/pod-facts';
import { buildCniOptions } from './cni-options';
import type { PodsContext } from './context';
import { StepRecorder } from '../common/steps';

export async function cniCheck(ctx: PodsContext, idOrPrefix: string): Promise<CniCheckReport> {
  const check = ctx.cni.check?.bind(ctx.cni);
  if (!check) throw new PodscopeError('FailedPrecondition', 'this engine cannot run CNI CHECK');
  const { id } = readyPod(ctx.store.pods, idOrPrefix, 'check');
  return ctx.locks.run(id, async () => {
    const rec = readyPod(ctx.store.pods, id, 'check');
    const measuredAt = new Date().toISOString();
    const trace = new StepRecorder(rec, 'check', (entry) => ctx.emit({ type: 'sandbox.progress', id: rec.id, entry }));
    const entries: TraceEntry[] = [];
    const record = (r: CniCallRecord) => entries.push(trace.add(r));
    try {
      const outcomes = await check(rec.id, rec.netnsPath, buildCniOptions(rec.id, rec.config), {
        record,
        pluginTimeoutMs: ctx.options.pluginTimeoutMs,
      });
      const networks = outcomes.map((o) => ({
        network: o.network,
        ifName: o.ifName,
        cniVersion: o.cniVersion,
        outcome: o.outcome,
        message: o.message,
        ...(o.error !== undefined ? { error: serializeError(o.error) } : {}),
        ...(o.knownDefect ? { knownDefect: o.knownDefect } : {}),
        entries: entries.filter((e) => (e.plugin?.network ?? (e.detail as { network?: string } | undefined)?.network) === o.network),
      }));
      return { id: rec.id, measuredAt, ok: networks.every((n) => n.outcome !== 'failed'), networks };
    } finally {
      await ctx.store.save(rec);
    }
  });
}

export async function cniStatus(ctx: PodsContext): Promise<CniStatusReport> {
  const statusEach = ctx.cni.statusEach?.bind(ctx.cni);
  if (!statusEach) throw new PodscopeError('FailedPrecondition', 'this engine cannot run CNI STATUS');
  const measuredAt = new Date().toISOString();
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
  const outcomes = await statusEach({ record, pluginTimeoutMs: ctx.options.pluginTimeoutMs });
  const networks = outcomes.map((o) => ({
    network: o.network,
    cniVersion: o.cniVersion,
    outcome: o.outcome,
    message: o.message,
    ...(o.error !== undefined ? { error: serializeError(o.error) } : {}),
    entries: entries.filter((e) => e.plugin?.network === o.network),
  }));
  return { measuredAt, ok: networks.every((n) => n.outcome !== 'failed'), networks };
}
