/**
 * The image store's own lock, apart from the engine's state-dir lock: the content store is append-only (blobs and
 * layers are named by digest and verified before they are renamed in), so reading needs no lock at all, and only
 * the short steps that change what the records reference take this one: a pull's or load's commit, a remove and its
 * collection, a rootfs being counted as a user. That is what lets `podscope images` / `images load` run beside the
 * app or `podscope serve` on the same state dir.
 *
 * flock(2) on <root>/store.lock (the same mechanism as the state-dir lock, state-lock.ts), taken per operation and
 * dropped when the descriptor closes, so a process that dies holding it releases it.
 */
import { closeSync, openSync } from 'node:fs';
import { PodscopeError } from '../../../shared/domain/errors';
import { KeyedMutex } from '../sandbox/keyed-mutex';
import { flockWaiting } from '../sandbox/state-lock';

/** a commit takes milliseconds to seconds (renames, a few record writes); waiting longer means something is stuck */
const WAIT_SECONDS = 60;

export class ImageStoreLock {
  /** the operations of this process queue here first, so they do not each spawn a waiting flock(1) */
  private readonly local = new KeyedMutex();

  constructor(private readonly file: string) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.local.run('store', async () => {
      const fd = openSync(this.file, 'a+', 0o600);
      try {
        if (!(await flockWaiting(fd, WAIT_SECONDS)))
          throw new PodscopeError(
            'Unavailable',
            `the image store lock ${this.file} was held by another process for over ${WAIT_SECONDS} s; try again`,
            { details: { lockFile: this.file } },
          );
        return await fn();
      } finally {
        closeSync(fd);
      }
    });
  }
}
