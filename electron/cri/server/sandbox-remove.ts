/** RemovePodSandbox: unknown id ⇒ success; the engine force-stops a running sandbox first (FACTS C11). */
import { hasCode } from '../../../shared/domain/errors';
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { resolveSandboxId } from './resolve-id';

export async function removePodSandbox(engine: CriEngine, req: pb.RemovePodSandboxRequest): Promise<pb.RemovePodSandboxResponse> {
  const target = await resolveSandboxId(engine, req.podSandboxId);
  if (!target.found) return {};
  try {
    await engine.remove(target.id);
  } catch (e) {
    if (!hasCode(e, 'NotFound')) throw e;
  }
  return {};
}
