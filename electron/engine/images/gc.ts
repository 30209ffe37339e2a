/**
 * Which containers use an image (users/<container id>.json, persisted because containers outlive the engine), and
 * collecting the layers and blobs no image record references any more. Both read the disk, not a process's memory:
 * another process may have added records or users since.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { hexOf } from './digests';
import type { ImageIndex } from './image-index';
import type { StorePaths } from './layout';

export interface UserFile {
  imageId: string;
  dir: string;
}

export async function readUser(paths: StorePaths, containerId: string): Promise<UserFile | undefined> {
  return readFile(paths.p('users', `${containerId}.json`), 'utf8').then(
    (t) => JSON.parse(t) as UserFile,
    () => undefined,
  );
}

/** the containers whose rootfs uses the image */
export async function usersOf(paths: StorePaths, imageId: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(paths.p('users')).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    const u = await readUser(paths, name.slice(0, -'.json'.length));
    if (u?.imageId === imageId) out.push(name.slice(0, -'.json'.length));
  }
  return out;
}

/** Deletes layers and blobs no image references (call under the store lock, with the index just reloaded). */
export async function collect(paths: StorePaths, index: ImageIndex): Promise<void> {
  const liveLayers = new Set<string>();
  const liveBlobs = new Set<string>();
  for (const s of index.all()) {
    for (const d of s.record.diffIds) liveLayers.add(hexOf(d));
    for (const b of s.blobs) liveBlobs.add(hexOf(b));
  }
  for (const name of await readdir(paths.p('layers')))
    if (!liveLayers.has(name)) await rm(paths.p('layers', name), { recursive: true, force: true });
  for (const name of await readdir(paths.p('blobs', 'sha256')))
    if (!liveBlobs.has(name)) await rm(paths.p('blobs', 'sha256', name), { force: true });
}
