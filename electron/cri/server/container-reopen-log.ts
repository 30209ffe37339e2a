/** ReopenContainerLog: the container's conmon reopens log_path (after the kubelet rotated it). */
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function reopenContainerLog(engine: CriEngine, req: pb.ReopenContainerLogRequest): Promise<pb.ReopenContainerLogResponse> {
  await engine.reopenContainerLog(requireContainerId(req.containerId));
  return {};
}
