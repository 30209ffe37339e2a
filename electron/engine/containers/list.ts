/** ListContainers (containerd internal/cri/server/container_list.go): filters by id prefix, state, sandbox and labels. */
import type { ContainerFilter, ContainerSummary } from '../../../shared/domain/container';
import type { ContainerContext } from './context';
import { observeExit, runsUnderLiveConmon } from './exit';
import type { ContainerRecord } from './record';
import { toContainerSummary, toCriContainerState } from './view';

/**
 * A list whose matches are this few looks at their exits first; a longer one relies on the exit poll (every second,
 * which announces an exit as an event), so listing 1,000 containers costs no /proc reads, as containerd's list costs
 * no shim calls (the same bound as the sandbox list, pods/status.ts).
 */
const EXITS_ON_LIST_MAX = 32;

export async function listContainers(ctx: ContainerContext, filter: ContainerFilter = {}): Promise<ContainerSummary[]> {
  // a sandbox filter is a prefix too (crictl ps -p <13 chars>); an unknown one matches nothing
  let sandboxId = filter.podSandboxId;
  if (sandboxId)
    sandboxId = (() => {
      try {
        return ctx.pods.resolve(sandboxId) ?? sandboxId;
      } catch {
        return sandboxId;
      }
    })();
  const labels = Object.entries(filter.labelSelector ?? {});
  // the state is matched after the exits are looked at: a look may have just ended a running one
  const matches = (rec: ContainerRecord) =>
    (!filter.id || rec.id.startsWith(filter.id)) &&
    (!sandboxId || rec.sandboxId === sandboxId) &&
    labels.every(([k, v]) => rec.config.labels?.[k] === v);
  const found = ctx.store.all().filter(matches);
  if (found.length <= EXITS_ON_LIST_MAX) {
    for (const rec of found) {
      if (rec.state !== 'Running' || runsUnderLiveConmon(ctx, rec)) continue;
      await ctx.locks.tryRun(rec.id, () => observeExit(ctx, rec)).catch(() => undefined);
    }
  }
  return found
    .filter((rec) => !filter.state || toCriContainerState(rec.state) === filter.state)
    .map(toContainerSummary)
    .sort((a, b) => (a.createdAtNs === b.createdAtNs ? a.id.localeCompare(b.id) : newerFirst(a.createdAtNs, b.createdAtNs)));
}

/** Newest first by creation time in ns: decimal strings compared by length, then text (no BigInt per comparison). */
function newerFirst(a: string, b: string): number {
  if (a.length !== b.length) return b.length - a.length;
  return a < b ? 1 : -1;
}
