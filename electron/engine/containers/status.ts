/** ContainerStatus (containerd internal/cri/server/container_status.go): the record, after a look at whether it exited. */
import type { ContainerStatusView } from '../../../shared/domain/container';
import type { ContainerContext } from './context';
import { observeExit, runsUnderLiveConmon } from './exit';
import { toContainerStatus } from './view';

export async function containerStatus(ctx: ContainerContext, idOrPrefix: string): Promise<ContainerStatusView> {
  const rec = ctx.store.get(idOrPrefix);
  if (rec.state === 'Running' && !runsUnderLiveConmon(ctx, rec)) await ctx.locks.tryRun(rec.id, () => observeExit(ctx, rec));
  // a verb in flight may have changed the record without saving it yet: that status is built live
  return ctx.locks.isHeld(rec.id) ? toContainerStatus(rec) : ctx.store.statusView(rec, toContainerStatus);
}
