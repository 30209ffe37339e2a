/**
 * UpdateContainerResources (containerd internal/cri/server/container_update_resources.go): the new resources are
 * stored, and a running container gets them through `runc update`. oom_score_adj cannot change after start.
 */
import { LinuxContainerResourcesSchema, type LinuxContainerResourcesInput } from '../../../shared/domain/container';
import { formatIssues } from '../../../shared/domain/config';
import { PodscopeError } from '../../../shared/domain/errors';
import { runtimeFor, type ContainerContext } from './context';
import { toContainerSummary } from './view';

export async function updateContainerResources(
  ctx: ContainerContext,
  idOrPrefix: string,
  input: LinuxContainerResourcesInput,
): Promise<void> {
  const parsed = LinuxContainerResourcesSchema.safeParse(input);
  if (!parsed.success) throw new PodscopeError('InvalidArgument', `invalid resources: ${formatIssues(parsed.error).join('; ')}`);
  const r = parsed.data;
  const rec = ctx.store.get(idOrPrefix);
  await ctx.locks.run(rec.id, async () => {
    if (rec.state === 'Exited' || rec.state === 'Unknown')
      throw new PodscopeError('FailedPrecondition', `container ${JSON.stringify(rec.id)} is not running or created`);
    const oci = {
      cpu: {
        ...(r.cpu_shares && { shares: r.cpu_shares }),
        ...(r.cpu_quota && { quota: r.cpu_quota }),
        ...(r.cpu_period && { period: r.cpu_period }),
        ...(r.cpuset_cpus && { cpus: r.cpuset_cpus }),
        ...(r.cpuset_mems && { mems: r.cpuset_mems }),
      },
      memory: {
        ...(r.memory_limit_in_bytes && { limit: r.memory_limit_in_bytes }),
        ...(r.memory_swap_limit_in_bytes && { swap: r.memory_swap_limit_in_bytes }),
      },
    };
    if (rec.state === 'Running') await runtimeFor(ctx, rec.runtimeHandler).update(rec.id, oci);
    const spec = rec.ociSpec as { linux?: { resources?: Record<string, unknown> } };
    if (spec.linux?.resources)
      Object.assign(
        spec.linux.resources,
        Object.keys(oci.cpu).length ? { cpu: oci.cpu } : {},
        Object.keys(oci.memory).length ? { memory: oci.memory } : {},
      );
    rec.config = {
      ...rec.config,
      linux: { ...rec.config.linux, resources: { ...r, oom_score_adj: rec.config.linux?.resources?.oom_score_adj ?? 0 } },
    };
    await ctx.store.save(rec);
    ctx.emit({ type: 'container.changed', id: rec.id, summary: toContainerSummary(rec) });
  });
}
