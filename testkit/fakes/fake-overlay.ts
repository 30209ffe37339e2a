/**
 * Fakes of the image store's two OS touch points (electron/engine/images/overlay.ts), so the real store runs in unit
 * tests without root, mknod, setfattr or an overlay mount:
 *
 * - FakeOverlayMarks writes overlayfs's marks in a form any user can create: a whiteout (a 0/0 character device on
 *   the host) is a symlink to WHITEOUT_SENTINEL, an opaque directory (the trusted.overlay.opaque xattr) holds an
 *   OPAQUE_MARKER file. Both are plain directory entries, so they survive the store's rename of a staged layer.
 * - CopyingRootfsMounter "mounts" by copying the lower dirs, base first, into the target, applying those marks as
 *   overlayfs would show them (a whiteout hides the name below it, an opaque dir hides everything below it); unmount
 *   empties the target again, as an unmounted mount point is.
 *
 * The store's own logic (staging, digests, records, users, gc) runs unchanged above them. For tests only.
 */
import { cp, lstat, mkdir, open, readdir, readlink, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { OverlayMarks, RootfsMounter } from '../../electron/engine/images/overlay';
import type { ProcessRunner } from '../../electron/engine/os/exec';
import type { HeldFileLock } from '../../electron/engine/os/file-lock';

export const WHITEOUT_SENTINEL = '/.podscope-fake-overlay-whiteout';
export const OPAQUE_MARKER = '.podscope-fake-overlay-opaque';

export class FakeOverlayMarks implements OverlayMarks {
  async whiteout(path: string): Promise<void> {
    await symlink(WHITEOUT_SENTINEL, path);
  }

  async opaque(dir: string): Promise<void> {
    await writeFile(join(dir, OPAQUE_MARKER), '');
  }
}

async function isWhiteout(path: string): Promise<boolean> {
  return (await readlink(path).catch(() => undefined)) === WHITEOUT_SENTINEL;
}

/** Lays one lower dir over what `dst` shows so far, as overlayfs merges it. */
async function applyLayer(src: string, dst: string): Promise<void> {
  const entries = await readdir(src, { withFileTypes: true });
  if (entries.some((e) => e.name === OPAQUE_MARKER)) {
    for (const name of await readdir(dst)) await rm(join(dst, name), { recursive: true, force: true });
  }
  for (const e of entries) {
    if (e.name === OPAQUE_MARKER) continue;
    const from = join(src, e.name);
    const to = join(dst, e.name);
    if (e.isSymbolicLink() && (await isWhiteout(from))) {
      await rm(to, { recursive: true, force: true });
      continue;
    }
    const below = await lstat(to).catch(() => undefined);
    if (e.isDirectory()) {
      if (!below?.isDirectory()) {
        if (below) await rm(to, { force: true });
        await mkdir(to);
      }
      await chmod(to, (await lstat(from)).mode & 0o7777);
      await applyLayer(from, to);
    } else {
      if (below) await rm(to, { recursive: true, force: true });
      await cp(from, to, { verbatimSymlinks: true, preserveTimestamps: true });
    }
  }
}

export class CopyingRootfsMounter implements RootfsMounter {
  /** target ⇒ its lower dirs (top first), for every "mount" not yet undone */
  readonly mounted = new Map<string, string[]>();
  /** the next mount throws this (once), leaving the target as it was */
  mountError: Error | undefined;

  async mount(input: { lowers: string[]; upper: string; work: string; target: string; signal?: AbortSignal }): Promise<void> {
    input.signal?.throwIfAborted();
    const error = this.mountError;
    this.mountError = undefined;
    if (error) throw error;
    try {
      for (const lower of [...input.lowers].reverse()) await applyLayer(lower, input.target);
    } catch (e) {
      await emptyDir(input.target);
      throw e;
    }
    this.mounted.set(input.target, [...input.lowers]);
  }

  async unmount(target: string): Promise<void> {
    if (!this.mounted.delete(target)) return;
    await emptyDir(target);
  }
}

async function emptyDir(dir: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) await rm(join(dir, name), { recursive: true, force: true });
}

/**
 * flock(2) on the store's lock file, within this process: exclusive per file path, first come first served, undefined
 * when `waitSeconds` ran out. The real lock spawns flock(1) (os/file-lock.ts), a fork of the test worker for every
 * store change (~250 in the unit suite); it is proven in tests/unit/spawn-helper.test.ts and by the real tests. Two
 * stores over one dir still exclude each other, as two processes would.
 */
class InProcessFileLocks {
  private readonly held = new Set<string>();
  private readonly waiting = new Map<string, Array<() => void>>();

  async hold(file: string, waitSeconds: number): Promise<HeldFileLock | undefined> {
    const key = resolve(file);
    // the real lock opens (creates) the file it locks
    await (await open(key, 'a', 0o600)).close();
    if (!this.held.has(key)) {
      this.held.add(key);
      return this.lockOn(key);
    }
    return new Promise((done) => {
      const queue = this.waiting.get(key) ?? [];
      this.waiting.set(key, queue);
      const wake = () => {
        clearTimeout(timer);
        done(this.lockOn(key));
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(wake), 1);
        done(undefined);
      }, waitSeconds * 1000);
      queue.push(wake);
    });
  }

  private lockOn(key: string): HeldFileLock {
    let holding = true;
    return {
      release: () => {
        if (!holding) return;
        holding = false;
        const next = this.waiting.get(key)?.shift();
        if (next) next();
        else this.held.delete(key);
      },
    };
  }
}

const fileLocks = new InProcessFileLocks();

/**
 * The store's runner in unit tests: it runs only mknod/setfattr/mount through it, which the fakes above replace, and
 * takes its lock through it (in this process, above).
 */
export const noProcessRunner: ProcessRunner = {
  run: (req) => Promise.reject(new Error(`unit tests run no host process (asked for ${req.file})`)),
  holdFileLock: (file, waitSeconds) => fileLocks.hold(file, waitSeconds),
};
