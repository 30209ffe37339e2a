/** StartContainer: a CREATED container only; the engine answers FailedPrecondition otherwise. */
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function startContainer(engine: CriEngine, req: pb.StartContainerRequest): Promise<pb.StartContainerResponse> {
  await engine.startContainer(requireContainerId(req.containerId));
  return {};
}
