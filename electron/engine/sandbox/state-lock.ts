/**
 * One engine per state dir: an O_EXCL lock file holding the owner's pid. A lock whose pid is gone is stale and taken
 * over; a live one is a clear FailedPrecondition that names the owner.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';

/** Lock files held by engines of this very process: the pid check alone cannot tell two of them apart. */
const heldHere = new Set<string>();

export class StateDirLock {
  private constructor(private readonly file: string) {}

  static async acquire(stateDir: string): Promise<StateDirLock> {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const file = join(stateDir, 'engine.lock');
    if (heldHere.has(file)) {
      throw new PodscopeError('FailedPrecondition', `state dir ${stateDir} is in use by another Podscope engine (pid ${process.pid}, this process)`, { details: { stateDir, ownerPid: process.pid } });
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fh = await open(file, 'wx', 0o600);
        await fh.writeFile(`${process.pid}\n`);
        await fh.close();
        heldHere.add(file);
        return new StateDirLock(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const owner = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
      // our own pid without a lock held here is a leftover of an earlier process that had the same pid
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new PodscopeError('FailedPrecondition', `state dir ${stateDir} is in use by another Podscope engine (pid ${owner}); stop it, talk to it through its CRI socket (--endpoint), or use another --state-dir`, {
          details: { stateDir, ownerPid: owner },
        });
      }
      await rm(file, { force: true }); // stale: its owner is gone
    }
    throw new PodscopeError('FailedPrecondition', `cannot lock state dir ${stateDir}: another engine raced for it`);
  }

  async release(): Promise<void> {
    if (!heldHere.delete(this.file)) return;
    await rm(this.file, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
