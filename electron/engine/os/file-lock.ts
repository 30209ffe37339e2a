/**
 * flock(2) from Node, which has no flock API: util-linux `flock(1)` is handed our descriptor as its fd 3, locks it and
 * exits. Our descriptor and its fd 3 are the same open file description, so the lock lives exactly as long as our
 * descriptor stays open (service/state-lock.ts explains why this and not a pid file or a socket). The descriptor is
 * opened O_CLOEXEC (libuv's default), so no other child inherits it and keeps the lock alive.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { PodscopeError } from '../../../shared/domain/errors';

/** the exit code flock(1) is told to use when the lock is held by someone else (`-E`); 75 is EX_TEMPFAIL */
const CONFLICT_EXIT = 75;

/** a flock taken for the caller; release() lets go (idempotent) */
export interface HeldFileLock {
  release(): void;
}

/** Runs `flock -n -E 75 3` on fd; true when it took the lock, false when someone else holds it. */
export function flockNonBlocking(fd: number): Promise<boolean> {
  return runFlock(fd, ['--nonblock']);
}

/**
 * Takes an exclusive flock on fd, waiting up to `waitSeconds` for another holder to let go; true when taken, false
 * when the wait ran out. The lock lives as long as fd stays open.
 */
function flockWaiting(fd: number, waitSeconds: number): Promise<boolean> {
  return runFlock(fd, ['--timeout', String(waitSeconds)]);
}

/** An exclusive flock on `file` (created 0600 if missing), waiting up to `waitSeconds`; undefined when that ran out. */
export async function holdFileLockInProcess(file: string, waitSeconds: number): Promise<HeldFileLock | undefined> {
  const fd = openSync(file, 'a+', 0o600);
  let taken = false;
  try {
    taken = await flockWaiting(fd, waitSeconds);
  } finally {
    if (!taken) closeSync(fd);
  }
  if (!taken) return undefined;
  let open = true;
  return {
    release: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

function runFlock(fd: number, mode: string[]): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', [...mode, '--conflict-exit-code', String(CONFLICT_EXIT), '3'], {
      stdio: ['ignore', 'ignore', 'pipe', fd],
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    child.once('error', (e) =>
      reject(new PodscopeError('Internal', `cannot run flock(1) from util-linux to take a lock: ${e.message}`, { cause: e })),
    );
    child.once('close', (code) => {
      if (code === 0) resolve(true);
      else if (code === CONFLICT_EXIT) resolve(false);
      else reject(new PodscopeError('Internal', `flock(1) failed (exit ${String(code)}): ${stderr.trim()}`));
    });
  });
}
