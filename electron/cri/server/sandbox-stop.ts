/** StopPodSandbox: idempotent; an unknown id (or one removed meanwhile) is a success, as the CRI API requires. */
import { hasCode } from '../../../shared/domain/errors';
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { resolveSandboxId } from './resolve-id';

export async function stopPodSandbox(engine: CriEngine, req: pb.StopPodSandboxRequest): Promise<pb.StopPodSandboxResponse> {
  const target = await resolveSandboxId(engine, req.podSandboxId);
  if (!target.found) return {};
  try {
    await engine.stop(target.id);
  } catch (e) {
    if (!hasCode(e, 'NotFound')) throw e;
  }
  return {};
}
