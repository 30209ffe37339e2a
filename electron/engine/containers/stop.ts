/**
 * StopContainer (containerd internal/cri/server/container_stop.go): the config's stop_signal, else the image's
 * StopSignal, else SIGTERM; after `timeout` seconds SIGKILL to every process of the container. A container that is
 * not running is a success; an unknown id is NotFound (containerd's answer too).
 */
import { constants } from 'node:os';
import { PodscopeError } from '../../../shared/domain/errors';
import { runtimeFor, type ContainerContext } from './context';
import { observeExit } from './exit';
import type { ContainerRecord } from './record';

/**
 * What `runc kill [--all]` does, without a runtime process (one exec is ~15-50 ms on a loaded host): the signal to
 * the container's init (its pid and start time checked first, as runc checks its state), or with `all` to every
 * process of the container's cgroup, read again until a pass finds no process it has not signalled yet (a fork that
 * raced the first read is caught by the next). Where the host cannot (no touch points, a signal Node does not name,
 * no known pid, a cgroup that cannot be read, or processes still appearing), the runtime's kill.
 */
async function signalContainer(ctx: ContainerContext, rec: ContainerRecord, signal: string, all: boolean): Promise<void> {
  const { signal: kill } = ctx.host;
  if (kill && rec.pid !== undefined && signal in constants.signals) {
    if (!all) {
      if (await ctx.processAlive(rec.pid, rec.startTicks)) kill(rec.pid, signal);
      return;
    }
    if (ctx.cgroups.procs) {
      const signalled = new Set<number>();
      for (let pass = 0; pass < 4; pass++) {
        const pids = await ctx.cgroups.procs(rec.cgroupsPath);
        if (pids === undefined) break;
        const fresh = pids.filter((p) => !signalled.has(p));
        if (fresh.length === 0) return;
        for (const p of fresh) {
          kill(p, signal);
          signalled.add(p);
        }
      }
    }
  }
  await runtimeFor(ctx, rec.runtimeHandler).kill(rec.id, signal, all);
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
