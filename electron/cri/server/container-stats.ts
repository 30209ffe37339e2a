/** ContainerStats and ListContainerStats from the containers' cgroups. */
import type * as pb from '../generated/runtime_v1';
import { statsToProto } from '../convert/container';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function containerStats(engine: CriEngine, req: pb.ContainerStatsRequest): Promise<pb.ContainerStatsResponse> {
  return { stats: statsToProto(await engine.containerStats(requireContainerId(req.containerId))) };
}

export async function listContainerStats(engine: CriEngine, req: pb.ListContainerStatsRequest): Promise<pb.ListContainerStatsResponse> {
  const f = req.filter;
  const stats = await engine.listContainerStats({
    ...(f?.id && { id: f.id }),
    ...(f?.podSandboxId && { podSandboxId: f.podSandboxId }),
    ...(f && Object.keys(f.labelSelector).length > 0 && { labelSelector: { ...f.labelSelector } }),
  });
  return { stats: stats.map(statsToProto) };
}
