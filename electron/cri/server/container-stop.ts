/** StopContainer: the stop signal, then SIGKILL after `timeout` seconds; an unknown id is NotFound (as containerd). */
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function stopContainer(engine: CriEngine, req: pb.StopContainerRequest): Promise<pb.StopContainerResponse> {
  await engine.stopContainer(requireContainerId(req.containerId), Number(req.timeout));
  return {};
}
