/** ListContainers (containerd internal/cri/server/container_list.go): filters by id prefix, state, sandbox and labels. */
import type { ContainerFilter, ContainerSummary } from '../../../shared/domain/container';
import type { ContainerContext } from './context';
import { observeAllExits } from './exit';
import { toContainerSummary } from './view';

export async function listContainers(ctx: ContainerContext, filter: ContainerFilter = {}): Promise<ContainerSummary[]> {
  await observeAllExits(ctx);
  // a sandbox filter is a prefix too (crictl ps -p <13 chars>); an unknown one matches nothing
  let sandboxId = filter.podSandboxId;
  if (sandboxId)
    sandboxId = (() => {
      try {
        return ctx.sandboxes.index.resolve(sandboxId) ?? sandboxId;
      } catch {
        return sandboxId;
      }
    })();
  return ctx.store
    .all()
    .map(toContainerSummary)
    .filter((c) => !filter.id || c.id.startsWith(filter.id))
    .filter((c) => !filter.state || c.state === filter.state)
    .filter((c) => !sandboxId || c.podSandboxId === sandboxId)
    .filter((c) => Object.entries(filter.labelSelector ?? {}).every(([k, v]) => c.labels[k] === v))
    .sort((a, b) => (a.createdAtNs === b.createdAtNs ? a.id.localeCompare(b.id) : BigInt(b.createdAtNs) > BigInt(a.createdAtNs) ? 1 : -1));
}
