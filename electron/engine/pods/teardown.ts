/** CNI DEL for a sandbox, with the capability args rebuilt from its stored config (libcni does not cache them for DEL). */
import { PodscopeError } from '../../../shared/domain/errors';
import { buildCniOptions } from './cni-options';
import type { PodsContext } from './context';
import { cniHooks } from './hooks';
import { cniScope, describePending, pendingFromCniError, setPending } from './pending-cleanup';
import type { SandboxRecord } from './record';
import type { StepRecorder } from '../common/steps';

/**
 * Every DEL failure is an error now, whether or not ADD completed: a plugin that ran may hold an IP, a veth, an
 * ipMasq chain or DNAT rules even when a later plugin failed. What is left is written to rec.cleanupPending (the
 * caller saves the record), and the next stop/remove retries exactly those plugins. Which plugins run: a retry of
 * what is left, else (after an incomplete ADD) only the plugins that ADD executed, else every plugin.
 * @param netnsPath "" when the namespace is already gone: plugins must still release what they hold (IPAM).
 */
export async function teardownNetwork(
  ctx: PodsContext,
  rec: SandboxRecord,
  trace: StepRecorder,
  netnsPath: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  // Lenient: a release path never re-validates (an annotation a newer engine rejects must not block the DEL).
  const options = buildCniOptions(rec.id, rec.config, { lenient: true });
  const scope = cniScope(rec);
  if (scope === 'nothing') {
    trace.add({
      step: 'cni.teardown',
      label: 'CNI DEL: nothing to release (no plugin was executed)',
      startedAt: new Date().toISOString(),
      durationMs: 0,
      ok: true,
    });
    return;
  }
  const label = scope.only
    ? `CNI DEL of what is left (${scope.only.map((r) => `${r.type}#${r.index}`).join(', ')})`
    : scope.executedOnAdd
      ? 'CNI DEL of every plugin the failed ADD executed'
      : 'CNI DEL of every network';
  try {
    await trace.step('cni.teardown', label, () => ctx.cni.remove(rec.id, netnsPath, options, cniHooks(ctx, trace, signal), scope));
    setPending(rec, 'cni', []);
  } catch (error) {
    const pending = pendingFromCniError(rec, error, new Date().toISOString());
    setPending(rec, 'cni', pending);
    throw new PodscopeError(
      error instanceof PodscopeError ? error.code : 'CniError',
      `failed to destroy network for sandbox ${JSON.stringify(rec.id)}: ${(error as Error).message}`,
      {
        cause: error,
        details: { cleanupPending: pending, left: describePending(pending) },
      },
    );
  }
}
