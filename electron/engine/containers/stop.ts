/**
 * StopContainer (containerd internal/cri/server/container_stop.go): the config's stop_signal, else the image's
 * StopSignal, else SIGTERM; after `timeout` seconds SIGKILL to every process of the container. A container that is
 * not running is a success; an unknown id is NotFound (containerd's answer too).
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { runtimeFor, type ContainerContext } from './context';
import { observeExit } from './exit';
import type { ContainerRecord } from './record';

/** The signal through the runtime, which reaches the processes directly where the host allows (runtime.ts). */
async function signalContainer(ctx: ContainerContext, rec: ContainerRecord, signal: string, all: boolean): Promise<void> {
  await runtimeFor(ctx, rec.runtimeHandler).kill(rec.id, signal, all, {
    pid: rec.pid,
    startTicks: rec.startTicks,
    cgroupsPath: rec.cgroupsPath,
  });
}

async function waitExit(ctx: ContainerContext, rec: ContainerRecord, ms: number): Promise<boolean> {
  const t0 = Date.now();
  // a killed init is gone within a few ms: look early, then back off
  let delay = 2;
  for (;;) {
    if (await observeExit(ctx, rec)) return true;
    if (Date.now() - t0 >= ms) return false;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}

/** The stop path; the caller holds the container's lock. */
export async function stopLocked(ctx: ContainerContext, rec: ContainerRecord, timeoutSeconds: number): Promise<void> {
  if (rec.state !== 'Running') return;
  if (await observeExit(ctx, rec)) return;
  rec.stopRequested = true;
  if (timeoutSeconds > 0) {
    await signalContainer(ctx, rec, rec.stopSignal, false);
    if (await waitExit(ctx, rec, timeoutSeconds * 1000)) return;
  }
  await signalContainer(ctx, rec, 'SIGKILL', true);
  if (!(await waitExit(ctx, rec, ctx.cleanupTimeoutMs))) {
    throw new PodscopeError('DeadlineExceeded', `container ${rec.id} still runs ${ctx.cleanupTimeoutMs} ms after SIGKILL`);
  }
}

export async function stopContainer(ctx: ContainerContext, idOrPrefix: string, timeoutSeconds: number): Promise<void> {
  const rec = ctx.store.get(idOrPrefix);
  await ctx.locks.run(rec.id, () => stopLocked(ctx, rec, Math.max(0, timeoutSeconds)));
}

/** StopPodSandbox's first step: every container of the pod, killed at once (containerd stops them with timeout 0). */
export async function stopSandboxContainers(ctx: ContainerContext, sandboxId: string): Promise<void> {
  const results = await Promise.allSettled(
    ctx.store.ofSandbox(sandboxId).map((rec) => ctx.locks.run(rec.id, () => stopLocked(ctx, rec, 0))),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
