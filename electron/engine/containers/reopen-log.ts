/**
 * ReopenContainerLog (containerd internal/cri/server/container_log_reopen.go): after the kubelet renamed the log
 * for rotation, conmon closes it and opens log_path afresh. Only a running container has a conmon to ask.
 * containerd opens the new file inside the call, so log_path exists when the RPC returns (the kubelet's rotation and
 * critest's "reopening container log" check right away); conmon reopens when it reads its ctl fifo, later, so the
 * file is created here first and conmon appends to it.
 */
import { open } from 'node:fs/promises';
import { PodscopeError } from '../../../shared/domain/errors';
import { runtimeFor, type ContainerContext } from './context';

export async function reopenContainerLog(ctx: ContainerContext, idOrPrefix: string): Promise<void> {
  const rec = ctx.store.get(idOrPrefix);
  if (rec.state !== 'Running' || rec.monitorPid === undefined) throw new PodscopeError('FailedPrecondition', 'container is not running');
  if (!rec.logPath) return;
  // 'a' keeps whatever conmon may already have written there
  await (await open(rec.logPath, 'a', 0o640)).close();
  await runtimeFor(ctx, rec.runtimeHandler).reopenLog(rec.monitorPid, rec.bundleDir);
}
