/**
 * ReopenContainerLog (containerd internal/cri/server/container_log_reopen.go): after the kubelet renamed the log
 * for rotation, the shim closes it and opens log_path afresh. Only a running container has a shim to ask.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { ContainerContext } from './context';

export async function reopenContainerLog(ctx: ContainerContext, idOrPrefix: string): Promise<void> {
  const rec = ctx.store.get(idOrPrefix);
  if (rec.state !== 'Running' || rec.shimPid === undefined) throw new PodscopeError('FailedPrecondition', 'container is not running');
  if (!rec.logPath) return;
  await ctx.runtime.reopenLog(rec.shimPid);
}
