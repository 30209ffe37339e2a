/** StopPodSandbox: idempotent; an unknown id (or one removed meanwhile) is a success, as the CRI API requires. */
import { hasCode } from '../../../shared/domain/errors';
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireSandboxId } from './resolve-id';

export async function stopPodSandbox(engine: CriEngine, req: pb.StopPodSandboxRequest): Promise<pb.StopPodSandboxResponse> {
  try {
    await engine.stop(requireSandboxId(req.podSandboxId));
  } catch (e) {
    if (!hasCode(e, 'NotFound')) throw e;
  }
  return {};
}
