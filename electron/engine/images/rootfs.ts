/**
 * A container's rootfs: the image's layers as overlay lower dirs, a private upper dir, counted as a user of the image
 * (users/<container id>.json) so a remove refuses the image while the container exists.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { writeFileDurable } from '../os/durable-write';
import { exists } from './blobs';
import { readUser, type UserFile } from './gc';
import type { ImageIndex, StoredImage } from './image-index';
import type { StorePaths } from './layout';
import type { RootfsMounter } from './overlay';
import type { ImageStoreLock } from './store-lock';
import type { ContainerRootfs } from './types';

export interface RootfsDeps {
  paths: StorePaths;
  index: ImageIndex;
  lock: ImageStoreLock;
  mounter: RootfsMounter;
}

export async function prepareRootfs(deps: RootfsDeps, imageId: string, containerId: string, dir: string): Promise<ContainerRootfs> {
  if (!/^[\w.-]{1,128}$/.test(containerId))
    throw new PodscopeError('InvalidArgument', `container id ${JSON.stringify(containerId)} is not a valid name`, {
      details: { field: 'containerId' },
    });
  const target = join(dir, 'rootfs');
  await deps.lock.run(async () => {
    const image = await findUnclaimed(deps, imageId, containerId);
    // Counting the user (a durable write: two fsyncs) and mounting (a mount(8) process) are independent and each a
    // few milliseconds, so they run side by side. Both finish under the lock: no other process can remove the image
    // between the check and the mount, at the price of this engine's concurrent creates taking turns to mount.
    const steps = await Promise.allSettled([
      writeFileDurable(userFilePath(deps.paths, containerId), JSON.stringify({ imageId: image.record.id, dir } satisfies UserFile), {
        mode: 0o644,
      }),
      (async () => {
        const lowers = await lowerDirs(deps.paths, image);
        for (const d of ['upper', 'work', 'rootfs']) await mkdir(join(dir, d), { recursive: true, mode: 0o755 });
        await deps.mounter.mount({ lowers, upper: join(dir, 'upper'), work: join(dir, 'work'), target });
      })(),
    ]);
    const failed = steps.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      // the user file may or may not have been written: release by what is there (unmount, dirs, user file)
      await releaseRootfs(deps, containerId, dir).catch(() => undefined);
      throw failed.reason;
    }
  });
  return { path: target, release: () => releaseRootfs(deps, containerId) };
}

const userFilePath = (paths: StorePaths, containerId: string) => paths.p('users', `${containerId}.json`);

/** Under the store lock: the image exists (another process may have just loaded or removed it) and this container has no rootfs yet. */
async function findUnclaimed(deps: RootfsDeps, imageId: string, containerId: string): Promise<StoredImage> {
  await deps.index.refresh();
  const found = deps.index.find(imageId);
  if (!found) throw new PodscopeError('NotFound', `image ${imageId} not found`, { details: { field: 'image' } });
  // a second mount for the same container would stack on the first and leak it
  if (await exists(userFilePath(deps.paths, containerId)))
    throw new PodscopeError('AlreadyExists', `a rootfs for container ${containerId} is already prepared (release it first)`, {
      details: { field: 'containerId' },
    });
  return found;
}

/** the image's unpacked layers, top first, as overlay wants them */
async function lowerDirs(paths: StorePaths, image: StoredImage): Promise<string[]> {
  const lowers: string[] = [];
  for (const d of [...image.record.diffIds].reverse()) {
    const fs = join(paths.layer(d), 'fs');
    if (!(await exists(fs))) throw new PodscopeError('Internal', `image ${image.record.id}: layer ${d} is missing from the store`);
    lowers.push(fs);
  }
  if (lowers.length === 0) {
    // overlay needs a lower dir; an image without layers gets an empty one
    await mkdir(paths.p('layers', 'empty'), { recursive: true });
    lowers.push(paths.p('layers', 'empty'));
  }
  return lowers;
}

/**
 * Unmounts and deletes the container's rootfs/upper/work and stops counting it as a user of its image. By
 * container id, so a restarted engine can release what an earlier one prepared. Idempotent. `dir`: where a prepare
 * that failed before its user file was written put its dirs.
 */
export async function releaseRootfs(deps: Pick<RootfsDeps, 'paths' | 'mounter'>, containerId: string, dir?: string): Promise<void> {
  const user = await readUser(deps.paths, containerId);
  const base = user?.dir ?? dir;
  if (base === undefined) return;
  await deps.mounter.unmount(join(base, 'rootfs'));
  for (const d of ['rootfs', 'upper', 'work']) await rm(join(base, d), { recursive: true, force: true });
  await rm(userFilePath(deps.paths, containerId), { force: true });
}
