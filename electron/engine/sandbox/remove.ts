/**
 * RemovePodSandbox (docs/semantics.md#remove-sandbox): unknown id is a success; force-stop first unless a stop already completed, require the netns to
 * be closed, delete the pause container and every file, then forget the record and release the name.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { EngineContext } from './context';
import { runtimeReporter } from './hooks';
import { resolveIdPrefix } from './id-index';
import { stopLocked } from './stop';
import { TraceRecorder } from './trace';

export async function removeSandbox(ctx: EngineContext, idOrPrefix: string): Promise<void> {
  const id = resolveIdPrefix(ctx.store.ids(), idOrPrefix);
  if (id === undefined) return;
  await ctx.locks.run(id, async () => {
    const rec = ctx.store.get(id);
    if (!rec) return;
    // containerd removes every container of the pod before the sandbox (sandbox_remove.go)
    await ctx.podContainers?.removeAll(id);
    // containerd re-runs the whole stop here (a second CNI DEL, ~170 ms of portmap). After a stop that completed there
    // is nothing left to release, so only an incomplete or never-run stop is (re)done.
    if (!rec.stopCompleted) await stopLocked(ctx, rec, 'remove');
    if (rec.netnsPath && !(await ctx.netns.isClosed(rec.netnsPath))) {
      throw new PodscopeError('FailedPrecondition', `sandbox network namespace ${JSON.stringify(rec.netnsPath)} is not fully closed`);
    }
    const trace = new TraceRecorder(rec, 'remove', (entry) => ctx.emit({ type: 'sandbox.progress', id, entry }));
    const signal = AbortSignal.timeout(ctx.cleanupTimeoutMs);
    await ctx.runtime.delete(id, { signal, report: runtimeReporter(trace) });
    await trace.step('sandbox.files', 'delete sandbox files', () => ctx.files.cleanup({ rootDir: rec.rootDir, runDir: rec.runDir, signal }));
    await ctx.store.delete(id);
    ctx.names.releaseByName(rec.name);
    ctx.emit({ type: 'sandbox.removed', id });
  });
}
