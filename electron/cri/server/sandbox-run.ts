/** RunPodSandbox: wire config ⇒ domain config ⇒ engine.run. Validation beyond "metadata present" is the engine's. */
import type * as pb from '../generated/runtime_v1';
import { configFromProto } from '../convert/config';
import type { CriEngine } from './handler';

export async function runPodSandbox(engine: CriEngine, req: pb.RunPodSandboxRequest): Promise<pb.RunPodSandboxResponse> {
  const config = configFromProto(req.config, 'strict');
  const { id } = await engine.run({ config, runtimeHandler: req.runtimeHandler });
  return { podSandboxId: id };
}
