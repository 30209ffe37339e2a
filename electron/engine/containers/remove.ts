/**
 * RemoveContainer (containerd internal/cri/server/container_remove.go): unknown id is a success; a running container
 * is killed first (containerd force-stops it too); then the runc container, the rootfs, the bundle and the record
 * go, and the name is released. The log file stays: it belongs to the kubelet's log directory.
 */
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { mountAt, readMountInfo } from '../netns/mountinfo';
import { runtimeFor, type ContainerContext } from './context';
import type { ContainerRecord } from './record';
import { stopLocked } from './stop';

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

export async function removeLocked(ctx: ContainerContext, rec: ContainerRecord): Promise<void> {
  await stopLocked(ctx, rec, 0);
  await runtimeFor(ctx, rec.runtimeHandler).delete(rec.id);
  await releaseRootfs(ctx, rec);
  await rm(dirname(rec.bundleDir), { recursive: true, force: true });
  await rm(rec.rootDir, { recursive: true, force: true });
  await ctx.store.delete(rec.id);
  ctx.names.releaseByName(rec.name);
  ctx.emit({ type: 'container.removed', id: rec.id, podSandboxId: rec.sandboxId });
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
