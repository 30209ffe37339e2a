/** CreateContainer: wire config ⇒ domain config ⇒ engine.createContainer (which validates and resolves the sandbox). */
import type * as pb from '../generated/runtime_v1';
import { containerConfigFromProto } from '../convert/container';
import type { CriEngine } from './handler';
import { requireSandboxId } from './resolve-id';

export async function createContainer(engine: CriEngine, req: pb.CreateContainerRequest): Promise<pb.CreateContainerResponse> {
  const config = containerConfigFromProto(req.config);
  const { id } = await engine.createContainer({ podSandboxId: requireSandboxId(req.podSandboxId), config });
  return { containerId: id };
}
