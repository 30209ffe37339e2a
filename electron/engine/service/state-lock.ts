/**
 * One engine per state dir and per run dir, decided by the directory's identity, not by how its path is spelled.
 *
 * The lock is flock(2) on `<dir>/engine.lock`. A flock belongs to the open file description, and a bind mount, a
 * symlink or `..` in the path all reach the same inode, so every spelling of the directory is the same lock (an
 * earlier version bound an abstract socket named after the realpath, which a bind mount defeated). The kernel drops
 * the lock when the last descriptor closes, i.e. when the engine exits however it exits (SIGKILL included): there is
 * never a stale lock to detect, unlike pid files or O_EXCL files.
 *
 * Node has no flock API, so util-linux `flock(1)` takes the lock for us (os/file-lock.ts): the engine opens the lock
 * file and hands that descriptor to `flock -n 3`, and the lock lives exactly as long as the engine's descriptor. No
 * helper process stays behind to outlive (or die before) the engine. CNI plugins, runc and the pause container never
 * inherit the descriptor (O_CLOEXEC) and cannot keep the lock alive after the engine is gone.
 *
 * The holder writes its pid into the lock file once it holds the lock, only so that a refused engine can name it.
 */
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PodscopeError } from '../../../shared/domain/errors';
import { flockNonBlocking } from '../os/file-lock';

export const LOCK_FILE = 'engine.lock';
/** how long to retry when the pid in the lock file is dead but the lock is still held (see acquire) */
const DEAD_HOLDER_GRACE_MS = 3000;
export type LockedDirKind = 'state' | 'run';

/**
 * Processes other than this one with the lock file open (read from /proc/<pid>/fd, which root can read): the real
 * holders, even when the pid written in the file is stale. Only called on the refusal path.
 */
function processesHolding(fd: number): { pid: string; comm: string }[] {
  const self = fstatSync(fd);
  const out: { pid: string; comm: string }[] = [];
  for (const pid of readdirSafe('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const holds = readdirSafe(`/proc/${pid}/fd`).some((n) => {
      try {
        const s = statSync(`/proc/${pid}/fd/${n}`);
        return s.dev === self.dev && s.ino === self.ino;
      } catch {
        return false;
      }
    });
    if (holds) out.push({ pid, comm: readFirstLine(`/proc/${pid}/comm`) });
  }
  return out;
}

/** Whether the pid written in the lock file is a live process (no pid yet: its writer has only just locked it). */
async function writtenHolderAlive(file: string): Promise<boolean> {
  const text = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!/^\d+$/.test(text)) return true;
  return existsSync(`/proc/${text}`);
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function readFirstLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n')[0] ?? '';
  } catch {
    return '';
  }
}

/** An exclusive flock on `<dir>/engine.lock`, held for as long as this object is not released (or the process lives). */
export class DirLock {
  private constructor(
    readonly dir: string,
    private fd: number | undefined,
    /** the pid a previous holder left in the file: it died holding the lock (a clean release clears it) */
    readonly previousHolder: string | undefined,
  ) {}

  /** dev:inode of the lock file: two DirLocks on one directory (however spelled) have the same identity */
  get identity(): string {
    if (this.fd === undefined) return '';
    const s = fstatSync(this.fd);
    return `${s.dev}:${s.ino}`;
  }

  static async acquire(dir: string, kind: LockedDirKind = 'state'): Promise<DirLock> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, LOCK_FILE);
    // a raw fd, not a FileHandle: a FileHandle is closed when garbage-collected, which would drop the lock
    const fd = openSync(file, 'a+', 0o600);
    let locked = false;
    try {
      locked = await flockNonBlocking(fd);
      // The engine named in the file is dead, yet the lock is held: by a child it was forking when it died (between
      // fork and exec a child shares every descriptor; close-on-exec drops ours only at exec). That lasts
      // milliseconds, so a restart right after a SIGKILL waits a moment instead of failing.
      const deadline = performance.now() + DEAD_HOLDER_GRACE_MS;
      while (!locked && performance.now() < deadline && !(await writtenHolderAlive(file))) {
        await sleep(50);
        locked = await flockNonBlocking(fd);
      }
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    if (!locked) {
      const holders = processesHolding(fd);
      closeSync(fd);
      // the pid written in the file names the engine; /proc names whoever really has the file open right now
      const written = (await readFile(file, 'utf8').catch(() => '')).trim();
      const owner =
        (holders.length ? holders.map((h) => (h.pid === written ? h.pid : `${h.pid} ${h.comm}`)).join(', ') : written) || 'unknown';
      const flag = kind === 'state' ? '--state-dir' : '--run-dir';
      throw new PodscopeError(
        'FailedPrecondition',
        `${kind} dir ${dir} is in use by another Podscope engine (pid ${owner}); stop it, talk to it through its CRI socket (--endpoint), or use another ${flag}`,
        {
          details: { [kind === 'state' ? 'stateDir' : 'runDir']: dir, lockFile: file, ownerPid: owner },
        },
      );
    }
    const previous = (await readFile(file, 'utf8').catch(() => '')).trim() || undefined;
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`, 0);
    return new DirLock(dir, fd, previous);
  }

  /** Closing the descriptor is what unlocks. The pid is cleared first so a reader never names a dead holder. */
  release(): void {
    if (this.fd === undefined) return;
    try {
      ftruncateSync(this.fd, 0);
    } catch {
      // unlocking matters, the stale pid text does not
    }
    closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The state dir lock (kept under its old name for callers and tests that lock only a state dir). */
export class StateDirLock {
  private constructor(private readonly locks: DirLock[]) {}

  /** pids of engines that died holding one of these dirs (SIGKILL, crash): start-up then looks for what they left running */
  get uncleanPreviousHolders(): string[] {
    return this.locks.flatMap((l) => (l.previousHolder ? [l.previousHolder] : []));
  }

  static async acquire(stateDir: string): Promise<StateDirLock> {
    return new StateDirLock([await DirLock.acquire(stateDir, 'state')]);
  }

  /**
   * Locks the state dir, then the run dir: an engine on another state dir but the same run dir would share the runc
   * root and the shm/bundle dirs, and its start-up would take the first engine's containers for its own orphans.
   * When both are one directory (however spelled) the one lock covers both.
   */
  static async acquireBoth(stateDir: string, runDir: string): Promise<StateDirLock> {
    const state = await DirLock.acquire(stateDir, 'state');
    try {
      const id = await lockIdentityOf(runDir);
      if (id !== undefined && id === state.identity) return new StateDirLock([state]);
      return new StateDirLock([state, await DirLock.acquire(runDir, 'run')]);
    } catch (e) {
      state.release();
      throw e;
    }
  }

  async release(): Promise<void> {
    for (const l of this.locks.splice(0).reverse()) l.release();
  }
}

/** dev:inode of `<dir>/engine.lock` when it exists (without creating anything) */
async function lockIdentityOf(dir: string): Promise<string | undefined> {
  const s = await stat(join(dir, LOCK_FILE)).catch(() => undefined);
  return s ? `${s.dev}:${s.ino}` : undefined;
}
