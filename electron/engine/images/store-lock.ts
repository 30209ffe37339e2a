/**
 * The image store's own lock, apart from the engine's state-dir lock: the content store is append-only (blobs and
 * layers are named by digest and verified before they are renamed in), so reading needs no lock at all, and only
 * the short steps that change what the records reference take this one: a pull's or load's commit, a remove and its
 * collection, a rootfs being counted as a user. That is what lets `podscope images` / `images load` run beside the
 * app or `podscope serve` on the same state dir.
 *
 * flock(2) on <root>/store.lock (the same mechanism as the state-dir lock, os/file-lock.ts), taken per operation and
 * dropped when the descriptor closes, so a process that dies holding it releases it. In the engine the descriptor is
 * the spawn helper's (a fork of the engine for flock(1) blocks its event loop; the helper ends with the engine).
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { KeyedMutex } from '../common/keyed-mutex';
import type { ProcessRunner } from '../os/exec';
import { holdFileLockInProcess } from '../os/file-lock';

/** a commit takes milliseconds to seconds (renames, a few record writes); waiting longer means something is stuck */
const WAIT_SECONDS = 60;

export class ImageStoreLock {
  /** the operations of this process queue here first, so they do not each spawn a waiting flock(1) */
  private readonly local = new KeyedMutex();

  /** @param locker takes the flock from its helper process when it can (SpawnHelperRunner); else in-process */
  constructor(
    private readonly file: string,
    private readonly locker?: Pick<ProcessRunner, 'holdFileLock'>,
  ) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.local.run('store', async () => {
      const held = await (this.locker?.holdFileLock?.(this.file, WAIT_SECONDS) ?? holdFileLockInProcess(this.file, WAIT_SECONDS));
      if (!held)
        throw new PodscopeError(
          'Unavailable',
          `the image store lock ${this.file} was held by another process for over ${WAIT_SECONDS} s; try again`,
          { details: { lockFile: this.file } },
        );
      try {
        return await fn();
      } finally {
        held.release();
      }
    });
  }
}
