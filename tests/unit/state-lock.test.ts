import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StateDirLock } from '../../electron/engine/service/state-lock';
import { hasCode } from '../../shared/domain/errors';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('refuses a second holder in the same process and frees the dir on release', async () => {
  const first = await StateDirLock.acquire(dir);
  await expect(StateDirLock.acquire(dir)).rejects.toSatisfy(
    (e) => hasCode(e, 'FailedPrecondition') && (e as Error).message.includes(`(pid ${process.pid})`),
  );
  await first.release();
  await (await StateDirLock.acquire(dir)).release();
});

it('a holder killed with SIGKILL leaves no stale lock behind (the kernel releases it)', async () => {
  const script = `import { StateDirLock } from ${JSON.stringify(join(__dirname, '../../electron/engine/service/state-lock.ts'))};
    await StateDirLock.acquire(${JSON.stringify(dir)}); console.log('locked'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve) => child.stdout!.once('data', resolve));
    await expect(StateDirLock.acquire(dir)).rejects.toThrow(`in use by another Podscope engine (pid ${child.pid})`);
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const next = await StateDirLock.acquire(dir);
  // the dead holder's pid is still in the file: the next engine knows the shutdown was unclean
  expect(next.uncleanPreviousHolders).toEqual([String(child.pid)]);
  await next.release();
  const after = await StateDirLock.acquire(dir);
  expect(after.uncleanPreviousHolders).toEqual([]); // a clean release clears it
  await after.release();
});

it('another spelling of the same dir (a symlink, a trailing "/.") is the same lock: the lock is on the file, not the path', async () => {
  const { mkdir, symlink } = await import('node:fs/promises');
  await mkdir(join(dir, 'state'));
  await symlink(join(dir, 'state'), join(dir, 'alias'));
  const first = await StateDirLock.acquire(join(dir, 'state'));
  await expect(StateDirLock.acquire(join(dir, 'alias'))).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
  await expect(StateDirLock.acquire(`${join(dir, 'state')}/.`)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
  await first.release();
});

it('locks the run dir too: a second engine with its own state dir but the same run dir is refused, naming the holder', async () => {
  const first = await StateDirLock.acquireBoth(join(dir, 'state-a'), join(dir, 'run'));
  await expect(StateDirLock.acquireBoth(join(dir, 'state-b'), join(dir, 'run'))).rejects.toSatisfy(
    (e) =>
      hasCode(e, 'FailedPrecondition') &&
      (e as Error).message.includes(`run dir ${join(dir, 'run')} is in use by another Podscope engine (pid ${process.pid})`),
  );
  // the refused engine let go of the state dir it had locked first
  await (await StateDirLock.acquire(join(dir, 'state-b'))).release();
  await first.release();
  await (await StateDirLock.acquireBoth(join(dir, 'state-b'), join(dir, 'run'))).release();
});

it('one dir used as both state and run dir is locked once', async () => {
  const lock = await StateDirLock.acquireBoth(join(dir, 'both'), join(dir, 'both'));
  await expect(StateDirLock.acquire(join(dir, 'both'))).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
  await lock.release();
});

it("a lock left held by a dead engine's child is waited for briefly; one held longer is refused, naming the process that holds it", async () => {
  const { writeFile } = await import('node:fs/promises');
  const file = join(dir, 'engine.lock');
  // flock(1) with a command: the command inherits the locked descriptor, as a child forked by a dying engine would
  const holdFor = async (seconds: number) => {
    const child = spawn('flock', [file, 'sleep', String(seconds)], { stdio: 'ignore', detached: true });
    // until it holds the lock (a non-blocking attempt then fails)
    for (let i = 0; i < 200 && spawnSync('flock', ['--nonblock', file, 'true']).status === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    await writeFile(file, '999999999\n'); // the engine that wrote its pid is gone
    return child;
  };
  const brief = await holdFor(0.3);
  const exited = new Promise((r) => brief.once('exit', r));
  const lock = await StateDirLock.acquire(dir); // waited for the child instead of failing
  expect(brief.exitCode ?? brief.signalCode).not.toBeNull();
  await lock.release();
  await exited;

  const long = await holdFor(30);
  try {
    await expect(StateDirLock.acquire(dir)).rejects.toSatisfy(
      (e) => hasCode(e, 'FailedPrecondition') && /in use by another Podscope engine \(pid \d+ (sleep|flock)/.test((e as Error).message),
    );
  } finally {
    process.kill(-long.pid!, 'SIGKILL'); // flock(1) and the sleep holding its descriptor
  }
}, 15_000);
