/**
 * RemovePodSandbox (docs/semantics.md#remove-sandbox): unknown id is a success; force-stop first unless a stop already completed, require the netns to
 * be closed, delete the pause container and every file, then forget the record and release the name.
 * A stop that leaves work (a plugin's DEL failed) keeps the sandbox with its pending cleanup; `force` gives up on it,
 * but only after saying what is left behind, in the error and the trace.
 */
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import type { RemoveOptions } from '../../../shared/domain/sandbox';
import type { PodsContext } from './context';
import { runtimeReporter } from './hooks';
import { describePending, pendingStep, setPending } from './pending-cleanup';
import { pauseLocationOf, type SandboxRecord } from './record';
import { stopLocked } from './stop';
import { StepRecorder } from '../common/steps';
import { toSummary } from './view';

export async function removeSandbox(ctx: PodsContext, idOrPrefix: string, opts: RemoveOptions = {}): Promise<void> {
  const id = ctx.store.index.resolve(idOrPrefix);
  if (id === undefined) return;
  await ctx.locks.run(id, async () => {
    const rec = ctx.store.get(id);
    if (!rec) return;
    // containerd removes every container of the pod before the sandbox (sandbox_remove.go)
    await ctx.podContainers?.removeAll(id);
    try {
      await removeLocked(ctx, rec);
    } catch (error) {
      if (!opts.force) throw error;
      await giveUp(ctx, rec, error);
    }
  });
}

async function removeLocked(ctx: PodsContext, rec: SandboxRecord): Promise<void> {
  const { id } = rec;
  // containerd re-runs the whole stop here (a second CNI DEL, ~170 ms of portmap). After a stop that completed there
  // is nothing left to release, so only an incomplete or never-run stop is (re)done.
  if (!rec.stopCompleted) await stopLocked(ctx, rec, 'remove');
  if (rec.netnsPath && !(await ctx.netns.isClosed(rec.netnsPath))) {
    throw new PodscopeError('FailedPrecondition', `sandbox network namespace ${JSON.stringify(rec.netnsPath)} is not fully closed`);
  }
  const trace = new StepRecorder(rec, 'remove', (entry) => ctx.emit({ type: 'sandbox.progress', id, entry }));
  const signal = AbortSignal.timeout(ctx.cleanupTimeoutMs);
  try {
    // The pause is stopped, so deleting its runtime state and its files are independent (the delete reads its own
    // state dir, not the bundle): both at once, and both must succeed before the record goes.
    const [deleted, cleaned] = await Promise.allSettled([
      ctx.runtime.delete(id, pauseLocationOf(rec), { signal, report: runtimeReporter(trace) }),
      trace.step('sandbox.files', 'delete sandbox files', () => ctx.files.cleanup({ rootDir: rec.rootDir, runDir: rec.runDir, signal })),
    ]);
    if (deleted.status === 'rejected') throw deleted.reason;
    if (cleaned.status === 'rejected') throw cleaned.reason;
  } catch (error) {
    setPending(rec, 'files', [
      pendingStep(
        'files',
        'delete the pause container and sandbox files',
        [`${pauseLocationOf(rec).handler} container ${id}`, rec.rootDir, rec.runDir],
        error,
      ),
    ]);
    rec.lastError = serializeError(error);
    await ctx.store.save(rec);
    ctx.emit({ type: 'sandbox.changed', id, summary: toSummary(rec) });
    throw error;
  }
  await ctx.store.delete(id);
  ctx.names.releaseByName(rec.name);
  ctx.emit({ type: 'sandbox.removed', id });
}

/** Forced remove whose cleanup failed: the last trace entry and the error say what is left on the host. */
async function giveUp(ctx: PodsContext, rec: SandboxRecord, error: unknown): Promise<never> {
  const { id } = rec;
  // best effort for what does not depend on the failed part; each is idempotent
  const signal = AbortSignal.timeout(ctx.cleanupTimeoutMs);
  const trace = new StepRecorder(rec, 'remove', (entry) => ctx.emit({ type: 'sandbox.progress', id, entry }));
  if (!rec.cleanupPending?.some((p) => p.kind === 'pause'))
    await ctx.runtime.delete(id, pauseLocationOf(rec), { signal, report: runtimeReporter(trace) }).catch(() => undefined);
  await ctx.files.cleanup({ rootDir: rec.rootDir, runDir: rec.runDir, signal }).catch(() => undefined);
  const left = rec.cleanupPending?.length ? rec.cleanupPending : [pendingStep('other', 'remove', [], error)];
  const text = describePending(left);
  trace.add({
    step: 'remove.forced',
    label: `forced remove gave up; left behind on the host: ${text}`,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    ok: false,
    error,
    detail: { leftBehind: left },
  });
  await ctx.store.delete(id);
  ctx.names.releaseByName(rec.name);
  ctx.emit({ type: 'sandbox.removed', id });
  throw new PodscopeError(
    error instanceof PodscopeError ? error.code : 'Internal',
    `sandbox ${id} was removed by force, but its cleanup did not finish; left behind on the host (remove by hand): ${text}`,
    {
      cause: error,
      details: { sandboxId: id, leftBehind: left, trace: rec.trace.slice(-1) },
    },
  );
}
