/**
 * Content-addressed blobs and unpacked layers: what a pull or load staged (and verified) under tmp/ is renamed in
 * here, under the store lock. A name is a digest, so whatever is already present is the same content and is kept.
 */
import { lstat, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncDir, writeFileDurable } from '../os/durable-write';
import type { StorePaths } from './layout';

export const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/** a layer staged under tmp/: <dir>/fs unpacked and verified, <dir>/layer.json beside it */
export interface StagedLayer {
  diffId: string;
  dir: string;
}

/** a compressed layer blob received under tmp/ and verified against its digest */
export interface StagedBlob {
  digest: string;
  file: string;
}

export function layerPresent(paths: StorePaths, diffId: string): Promise<boolean> {
  return exists(join(paths.layer(diffId), 'fs'));
}

/** Puts small documents (manifest, index, config) and staged layer blobs in blobs/ (call under the store lock). */
export async function commitBlobs(paths: StorePaths, inline: { digest: string; bytes: Buffer }[], staged: StagedBlob[]): Promise<void> {
  for (const b of inline) {
    const target = paths.blob(b.digest);
    if (!(await exists(target))) await writeFileDurable(target, b.bytes, { mode: 0o644 });
  }
  let renamed = false;
  for (const b of staged) {
    const target = paths.blob(b.digest);
    if (await exists(target)) continue;
    await rename(b.file, target);
    renamed = true;
  }
  if (renamed) await syncDir(dirname(paths.blob('sha256:')));
}

/** Moves staged layers into layers/ (call under the store lock). */
export async function commitLayers(paths: StorePaths, staged: StagedLayer[]): Promise<void> {
  for (const l of staged) {
    const target = paths.layer(l.diffId);
    if (await exists(join(target, 'fs'))) continue; // a concurrent pull committed the same layer first
    await rm(target, { recursive: true, force: true });
    await rename(l.dir, target);
  }
  if (staged.length > 0) await syncDir(paths.p('layers'));
}

/** the unpacked size layer.json records (0 when unreadable) */
export async function layerSize(paths: StorePaths, diffId: string): Promise<number> {
  try {
    const meta = JSON.parse(await readFile(join(paths.layer(diffId), 'layer.json'), 'utf8')) as { size?: number };
    return meta.size ?? 0;
  } catch {
    return 0;
  }
}
