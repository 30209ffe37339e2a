/** RemovePodSandbox: unknown id ⇒ success; the engine force-stops a running sandbox first (docs/semantics.md#remove-sandbox). */
import { hasCode } from '../../../shared/domain/errors';
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireSandboxId } from './resolve-id';

export async function removePodSandbox(engine: CriEngine, req: pb.RemovePodSandboxRequest): Promise<pb.RemovePodSandboxResponse> {
  try {
    await engine.remove(requireSandboxId(req.podSandboxId));
  } catch (e) {
    if (!hasCode(e, 'NotFound')) throw e;
  }
  return {};
}
