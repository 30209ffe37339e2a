/**
 * Where everything of the image store lives under its root (<stateDir>/images):
 *   blobs/sha256/<hex>          manifests, configs, compressed layers (by digest)
 *   layers/<diffID hex>/fs      each layer unpacked once, overlayfs whiteouts in place (unpack.ts); layer.json beside it
 *   images/<id hex>.json        one record per image (id = config digest), written durably (image-index.ts)
 *   users/<container id>.json   which container's rootfs uses which image (persisted: containers outlive the engine)
 *   tmp/<pid>-…                 work dirs of pulls and loads in flight, named after the process doing them
 *   store.lock                  the store's own lock (store-lock.ts), apart from the engine's state-dir lock
 *
 * More than one process may use one store at a time (the app, and the CLI's `images`/`load` beside it), so a
 * process only ever deletes work dirs and temp files that a dead process left behind.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const DIRS = ['blobs/sha256', 'layers', 'images', 'users', 'tmp'];

export class StorePaths {
  constructor(readonly root: string) {}

  p(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  blob(digest: string): string {
    return this.p('blobs', 'sha256', digest.slice('sha256:'.length));
  }

  layer(diffId: string): string {
    return this.p('layers', diffId.slice('sha256:'.length));
  }

  get lockFile(): string {
    return this.p('store.lock');
  }

  /** a fresh work dir under tmp/, carrying this process's pid so no other process takes it for a leftover */
  workDir(kind: string): Promise<string> {
    return mkdtemp(this.p('tmp', `${process.pid}-${kind}-`));
  }

  /** Creates the dirs and deletes the work a crashed (no longer running) process left under tmp/. */
  async prepare(): Promise<void> {
    for (const d of DIRS) await mkdir(this.p(d), { recursive: true, mode: 0o700 });
    for (const name of await readdir(this.p('tmp'))) {
      if (!ownerAlive(name.split('-')[0]!)) await rm(this.p('tmp', name), { recursive: true, force: true });
    }
  }
}

/** whether the pid a work dir or temp file is named after is a running process (anything else is a leftover) */
export function ownerAlive(pid: string): boolean {
  return /^\d+$/.test(pid) && existsSync(`/proc/${pid}`);
}
