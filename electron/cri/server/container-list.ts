/** ListContainers: filters by id (prefix), state, pod sandbox and labels. */
import type * as pb from '../generated/runtime_v1';
import { containerStateFromProto, summaryToContainer } from '../convert/container';
import type { CriEngine } from './handler';

export async function listContainers(engine: CriEngine, req: pb.ListContainersRequest): Promise<pb.ListContainersResponse> {
  const f = req.filter;
  const list = await engine.listContainers({
    ...(f?.id && { id: f.id }),
    ...(f?.state && { state: containerStateFromProto(f.state.state) }),
    ...(f?.podSandboxId && { podSandboxId: f.podSandboxId }),
    ...(f && Object.keys(f.labelSelector).length > 0 && { labelSelector: { ...f.labelSelector } }),
  });
  return { containers: list.map(summaryToContainer) };
}
