/**
 * Noticing a container's exit. containerd's shim reports task exits; here conmon (a subreaper, the container's parent)
 * reaps it and writes its exit file, so the engine looks at the pid and then reads that file. Reason as
 * containerd's: OOMKilled when the cgroup's OOM kill counter moved, Completed for exit 0, Error otherwise.
 */
import { runsUnderLiveMonitor } from '../common/proc';
import { walkYielding } from '../common/walk';
import { runtimeFor, type ContainerContext } from './context';
import type { ContainerRecord } from './record';
import { toContainerSummary } from './view';

/** How long after the pid is gone a missing exit file is waited for (conmon writes it once the output is drained). */
const EXIT_FILE_GRACE_MS = 3000;

/**
 * Running, by the cheap look alone (runsUnderLiveMonitor): no exit to observe, so a read need not take the
 * container's lock for observeExit (at 20 containers a list spent more on those locks than on the rest).
 */
export function runsUnderLiveConmon(ctx: ContainerContext, rec: ContainerRecord): boolean {
  return rec.state === 'Running' && rec.pid !== undefined && runsUnderLiveMonitor(ctx.processExists, rec.pid, rec.monitorPid);
}

/**
 * Returns true when the container is (now) known to have exited. The caller holds the container's lock. Reads ask
 * the cheap way while its conmon lives (runsUnderLiveMonitor); `exact` (the background poll, recovery) always reads
 * /proc, so a pid reused after both were gone is caught there.
 */
export async function observeExit(ctx: ContainerContext, rec: ContainerRecord, opts: { exact?: boolean } = {}): Promise<boolean> {
  if (rec.state !== 'Running') return rec.state === 'Exited';
  if (!opts.exact && runsUnderLiveConmon(ctx, rec)) return false;
  if (rec.pid !== undefined && (await ctx.processAlive(rec.pid, rec.startTicks))) return false;
  // the cgroup (kept until the runtime's delete) is read while the exit file is looked for
  const usageRead = ctx.cgroups.usage(rec.cgroupsPath).catch(() => undefined);
  let exit = await runtimeFor(ctx, rec.runtimeHandler).exitInfo(rec.bundleDir);
  if (!exit) {
    const monitorAlive = rec.monitorPid !== undefined && (await ctx.processAlive(rec.monitorPid));
    // a monitor that exited since the first read wrote the file before it went: read once more
    if (!monitorAlive) exit = await runtimeFor(ctx, rec.runtimeHandler).exitInfo(rec.bundleDir);
    if (monitorAlive) {
      // conmon is still writing it; give it a moment, looking early and then less often, then fall back to
      // "unknown exit"
      const t0 = Date.now();
      for (let delay = 2; !exit && Date.now() - t0 < EXIT_FILE_GRACE_MS; delay = Math.min(delay * 2, 20)) {
        await new Promise((r) => setTimeout(r, delay));
        exit = await runtimeFor(ctx, rec.runtimeHandler).exitInfo(rec.bundleDir);
      }
    }
  }
  const usage = await usageRead;
  rec.state = 'Exited';
  rec.exitCode = exit?.exitCode ?? 255;
  rec.finishedAtNs = exit?.finishedAtNs ?? (BigInt(Date.now()) * 1_000_000n).toString();
  if (!exit) {
    rec.reason = 'Unknown';
    rec.message = 'the container exited while no conmon was watching it (its exit code is lost)';
  } else if ((usage?.oomKills ?? 0) > 0) {
    rec.reason = 'OOMKilled';
  } else {
    rec.reason = rec.exitCode === 0 ? 'Completed' : 'Error';
  }
  await ctx.store.save(rec);
  ctx.emit({ type: 'container.changed', id: rec.id, summary: toContainerSummary(rec) });
  return true;
}

/**
 * The background poll: every running container not busy with a verb, the cheap look first unless `exact`, with a
 * turn of the event loop every few dozen containers so calls that arrive meanwhile are not held up by the walk.
 */
export async function observeAllExits(ctx: ContainerContext, opts: { exact?: boolean } = {}): Promise<void> {
  await walkYielding(ctx.store.all(), async (rec) => {
    if (rec.state !== 'Running' || (!opts.exact && runsUnderLiveConmon(ctx, rec))) return;
    await ctx.locks.tryRun(rec.id, () => observeExit(ctx, rec, opts)).catch(() => undefined);
  });
}
