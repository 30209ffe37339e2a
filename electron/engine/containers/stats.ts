/** ContainerStats / ListContainerStats (containerd internal/cri/server/container_stats*.go) from the container's cgroup. */
import type { ContainerFilter, ContainerStats } from '../../../shared/domain/container';
import type { ContainerContext } from './context';
import type { ContainerRecord } from './record';

async function statsOf(ctx: ContainerContext, rec: ContainerRecord): Promise<ContainerStats> {
  const u = rec.state === 'Running' ? await ctx.cgroups.usage(rec.cgroupsPath).catch(() => ({})) : {};
  const s = (v: bigint | undefined) => (v === undefined ? undefined : v.toString());
  const usage = u as { cpuUsageNs?: bigint; memoryWorkingSetBytes?: bigint; memoryUsageBytes?: bigint; memoryRssBytes?: bigint };
  return {
    id: rec.id,
    podSandboxId: rec.sandboxId,
    metadata: rec.config.metadata,
    labels: rec.config.labels,
    annotations: rec.config.annotations,
    timestampNs: (BigInt(Date.now()) * 1_000_000n).toString(),
    ...(usage.cpuUsageNs !== undefined && { cpuUsageCoreNs: s(usage.cpuUsageNs) }),
    ...(usage.memoryWorkingSetBytes !== undefined && { memoryWorkingSetBytes: s(usage.memoryWorkingSetBytes) }),
    ...(usage.memoryUsageBytes !== undefined && { memoryUsageBytes: s(usage.memoryUsageBytes) }),
    ...(usage.memoryRssBytes !== undefined && { memoryRssBytes: s(usage.memoryRssBytes) }),
  };
}

export async function containerStats(ctx: ContainerContext, idOrPrefix: string): Promise<ContainerStats> {
  return statsOf(ctx, ctx.store.get(idOrPrefix));
}

export async function listContainerStats(ctx: ContainerContext, filter: Omit<ContainerFilter, 'state'> = {}): Promise<ContainerStats[]> {
  const recs = ctx.store
    .all()
    .filter((r) => !filter.id || r.id.startsWith(filter.id))
    .filter((r) => !filter.podSandboxId || r.sandboxId.startsWith(filter.podSandboxId))
    .filter((r) => Object.entries(filter.labelSelector ?? {}).every(([k, v]) => r.config.labels[k] === v));
  return Promise.all(recs.map((r) => statsOf(ctx, r)));
}
