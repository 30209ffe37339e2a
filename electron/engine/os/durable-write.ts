/**
 * The one way the engine replaces a file on disk so that a crash at any instant leaves either the old content or the
 * new, never a torn file, and the new content survives a power loss once the call returns: write a temp file beside the
 * target, fsync it, rename it over the target, fsync the directory (the rename itself is a directory entry change that
 * lives only in the page cache until the directory is synced).
 *
 * Every store of the engine (sandbox and container records, the CNI result cache, the image index, the lab's runs and
 * crash records, saved conflists) writes through here, so they share one crash story.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface DurableWriteOptions {
  /** permission bits of a newly created file (default 0o600: records may hold pod configs and credentials) */
  mode?: number;
  /** create the parent directory (with this mode) when it is missing */
  mkdirMode?: number;
  /**
   * the temp file's path, for a store whose readers and start-up sweep recognise its own temp names (it must be
   * unique per call and in the target's directory); default `<file>.<pid>.<random>.tmp`
   */
  tempPath?: string;
}

/** Writes `data` to `file` atomically and durably (see the file comment). The temp file never survives a failure. */
export async function writeFileDurable(file: string, data: string | Uint8Array, opts: DurableWriteOptions = {}): Promise<void> {
  const dir = dirname(file);
  if (opts.mkdirMode !== undefined) await mkdir(dir, { recursive: true, mode: opts.mkdirMode });
  // unique per call: two writes of one file may overlap, and each must rename its own complete temp file
  const tmp = opts.tempPath ?? `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await open(tmp, 'w', opts.mode ?? 0o600);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

/** fsync of a directory, so a rename or unlink in it is on disk. A filesystem that cannot sync a directory is tolerated. */
export async function syncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, 'r');
  } catch {
    return;
  }
  try {
    await fh.sync();
  } catch (e) {
    // EINVAL/ENOTSUP: the filesystem (e.g. some FUSE mounts) has no directory fsync; the rename is still atomic there
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP') throw e;
  } finally {
    await fh.close();
  }
}
