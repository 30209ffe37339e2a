/** RemoveContainer: idempotent (an unknown id is a success), a running container is killed first. */
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function removeContainer(engine: CriEngine, req: pb.RemoveContainerRequest): Promise<pb.RemoveContainerResponse> {
  await engine.removeContainer(requireContainerId(req.containerId));
  return {};
}
