/** UpdateContainerResources: the Linux resources only (Windows ones are not declared). */
import type * as pb from '../generated/runtime_v1';
import { resourcesFromProto } from '../convert/container';
import { invalidArgument } from '../../../shared/domain/errors';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function updateContainerResources(
  engine: CriEngine,
  req: pb.UpdateContainerResourcesRequest,
): Promise<pb.UpdateContainerResourcesResponse> {
  if (!req.linux) throw invalidArgument('linux resources must be set');
  await engine.updateContainerResources(requireContainerId(req.containerId), resourcesFromProto(req.linux));
  return {};
}
