/** CNI DEL for a sandbox, with the capability args rebuilt from its stored config (libcni does not cache them for DEL). */
import { PodscopeError } from '../../../shared/domain/errors';
import { buildCniOptions } from './cni-options';
import type { EngineContext } from './context';
import { cniHooks } from './hooks';
import type { SandboxRecord } from './record';
import type { TraceRecorder } from './trace';

/**
 * A DEL failure is an error only when a CNI result was stored (containerd's rule): when ADD never completed, a
 * plugin that cannot DEL what it never finished creating must not pin the sandbox and its name forever. The trace
 * keeps the failure either way.
 * @param netnsPath "" when the namespace is already gone: plugins must still release what they hold (IPAM).
 */
export async function teardownNetwork(ctx: EngineContext, rec: SandboxRecord, trace: TraceRecorder, netnsPath: string, signal: AbortSignal | undefined): Promise<void> {
  // Lenient: a release path never re-validates (an annotation a newer engine rejects must not block the DEL).
  const options = buildCniOptions(rec.id, rec.config, { lenient: true });
  try {
    await trace.step('cni.teardown', 'CNI DEL of every network', () => ctx.cni.remove(rec.id, netnsPath, options, cniHooks(ctx, trace, signal)));
  } catch (error) {
    if (rec.network) {
      throw new PodscopeError(error instanceof PodscopeError ? error.code : 'CniError', `failed to destroy network for sandbox ${JSON.stringify(rec.id)}: ${(error as Error).message}`, { cause: error });
    }
  }
}
