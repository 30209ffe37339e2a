/** CNI DEL for a sandbox, with the capability args rebuilt from its stored config (libcni does not cache them for DEL). */
import { PodscopeError } from '../../../shared/domain/errors';
import { buildCniOptions } from './cni-options';
import type { EngineContext } from './context';
import { cniHooks } from './hooks';
import type { SandboxRecord } from './record';
import type { TraceRecorder } from './trace';

/**
 * @param netnsPath "" when the namespace is already gone: plugins must still release what they hold (IPAM).
 * @param strict when false, a failure is only recorded if no CNI result was ever stored — containerd's rule, so a
 *   plugin that cannot DEL what it never created does not pin the sandbox forever.
 */
export async function teardownNetwork(ctx: EngineContext, rec: SandboxRecord, trace: TraceRecorder, netnsPath: string, signal: AbortSignal | undefined, strict: boolean): Promise<void> {
  const options = buildCniOptions(rec.id, rec.config);
  try {
    await trace.step('cni.teardown', 'CNI DEL of every network', () => ctx.cni.remove(rec.id, netnsPath, options, cniHooks(ctx, trace, signal)));
  } catch (error) {
    if (strict || rec.network) {
      throw new PodscopeError(error instanceof PodscopeError ? error.code : 'CniError', `failed to destroy network for sandbox ${JSON.stringify(rec.id)}: ${(error as Error).message}`, { cause: error });
    }
  }
}
