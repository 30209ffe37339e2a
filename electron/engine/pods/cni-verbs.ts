/**
 * CNI CHECK for a sandbox and STATUS for the loaded networks, on demand. CHECK runs under the sandbox's lock with
 * the options ADD had (same CNI_ARGS and capability args, rebuilt from the stored config as containerd's
 * sandbox code does for every CNI call) and lands in the sandbox's trace, phase "check", like ADD/DEL.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { CniCheckReport, CniStatusReport } from '../../../shared/domain/measure';
import type { TraceEntry } from '../../../shared/domain/sandbox';
import { checkReportNetworks, cniCallEntries, statusReportNetworks } from '../cni/reports';
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
      const networks = checkReportNetworks(outcomes, entries);
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
  const { entries, record } = cniCallEntries();
  const outcomes = await statusEach({ record, pluginTimeoutMs: ctx.options.pluginTimeoutMs });
  const networks = statusReportNetworks(outcomes, entries);
  return { measuredAt, ok: networks.every((n) => n.outcome !== 'failed'), networks };
}
