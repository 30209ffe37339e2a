/**
 * RemoveContainer (containerd internal/cri/server/container_remove.go): unknown id is a success; a running container
 * is killed first (containerd force-stops it too). The log file stays: it belongs to the kubelet's log directory.
 *
 * What the caller waits for is only what makes the container gone: the stop, then its record moved (one rename) from
 * the store into `<stateDir>/containers-removing`, the name released and the event sent. The runtime's state, the
 * rootfs mount and the directories go right after, off the request path, as containerd leaves its snapshot to the
 * garbage collector: each is a process or a tree walk (runc delete and umount are two execs, ~30 ms each on a loaded
 * host) the kubelet need not wait for. The moved record is the promise to finish: it is deleted last, and a start-up
 * finds any left by a crash and finishes them before anything else (docs/semantics.md#container-lifecycle).
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { mountAt, readMountInfo } from '../netns/mountinfo';
import { runtimeFor, type ContainerContext } from './context';
import type { ContainerRecord } from './record';
import { stopLocked } from './stop';

/** removals still finishing in the background, per engine */
const finishing = new WeakMap<ContainerContext, Set<Promise<void>>>();

const removingDir = (ctx: ContainerContext) => join(ctx.options.stateDir, 'containers-removing');

/**
 * After an engine restart the ImageStore's rootfs handle is gone: the store releases by container id then
 * (ImageStore.releaseRootfs). A store that can do neither is refused rather than have the directory deleted
 * through a rootfs that may still be mounted.
 */
async function releaseRootfs(ctx: ContainerContext, rec: ContainerRecord): Promise<void> {
  const handle = ctx.rootfs.get(rec.id);
  if (handle) {
    await handle.release();
    ctx.rootfs.delete(rec.id);
    return;
  }
  if (ctx.images.releaseRootfs) return ctx.images.releaseRootfs(rec.id);
  if (mountAt(await readMountInfo(), rec.rootfsPath)) {
    throw new PodscopeError(
      'FailedPrecondition',
      `the rootfs of container ${rec.id} is still mounted at ${rec.rootfsPath} and its image store cannot release it`,
    );
  }
}

/**
 * Everything of a stopped container but its record: the runtime's state and the rootfs (independent once the
 * container is dead: both at once), then its directories, then the moved record. Idempotent, so a start-up may repeat
 * what a crash interrupted.
 */
async function finishRemoval(ctx: ContainerContext, rec: ContainerRecord): Promise<void> {
  const released = await Promise.allSettled([runtimeFor(ctx, rec.runtimeHandler).delete(rec.id), releaseRootfs(ctx, rec)]);
  const failed = released.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  await Promise.all([rm(dirname(rec.bundleDir), { recursive: true, force: true }), rm(rec.rootDir, { recursive: true, force: true })]);
  await rm(join(removingDir(ctx), `${rec.id}.json`), { force: true });
}

export async function removeLocked(ctx: ContainerContext, rec: ContainerRecord): Promise<void> {
  await stopLocked(ctx, rec, 0);
  await mkdir(removingDir(ctx), { recursive: true, mode: 0o700 });
  await ctx.store.retire(rec, removingDir(ctx));
  ctx.names.releaseByName(rec.name);
  ctx.emit({ type: 'container.removed', id: rec.id, podSandboxId: rec.sandboxId });
  let set = finishing.get(ctx);
  if (!set) finishing.set(ctx, (set = new Set()));
  // a failure keeps the moved record: the next start-up retries and reports it among the engine's problems
  const done: Promise<void> = finishRemoval(ctx, rec)
    .catch(() => undefined)
    .finally(() => set.delete(done));
  set.add(done);
}

export async function removeContainer(ctx: ContainerContext, idOrPrefix: string): Promise<void> {
  const rec = ctx.store.resolve(idOrPrefix);
  if (!rec) return;
  await ctx.locks.run(rec.id, async () => {
    if (ctx.store.resolve(rec.id) !== rec) return;
    await removeLocked(ctx, rec);
  });
}

/** RemovePodSandbox's first step: every container of the pod. */
export async function removeSandboxContainers(ctx: ContainerContext, sandboxId: string): Promise<void> {
  for (const rec of ctx.store.ofSandbox(sandboxId)) await ctx.locks.run(rec.id, () => removeLocked(ctx, rec));
}

/** Resolves once every removal started so far has finished in the background (engine close, tests). */
export async function removalsFinished(ctx: ContainerContext): Promise<void> {
  for (let set = finishing.get(ctx); set && set.size > 0;) await Promise.all([...set]);
}

/**
 * Start-up: finishes every removal a crash (or a failure) left in `containers-removing`, before the orphan sweep
 * would delete the runtime's state without releasing the rootfs. Returns what could not be finished.
 */
export async function finishInterruptedRemovals(ctx: ContainerContext): Promise<string[]> {
  const problems: string[] = [];
  const names = await readdir(removingDir(ctx)).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    try {
      const rec = JSON.parse(await readFile(join(removingDir(ctx), name), 'utf8')) as ContainerRecord;
      await finishRemoval(ctx, rec);
    } catch (e) {
      problems.push(`removing container ${name.replace(/\.json$/, '')}: ${(e as Error).message}`);
    }
  }
  return problems;
}
