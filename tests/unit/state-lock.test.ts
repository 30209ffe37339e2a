import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StateDirLock } from '../../electron/engine/sandbox/state-lock';
import { hasCode } from '../../shared/domain/errors';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'podscope-lock-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

it('refuses a second holder in the same process and frees the dir on release', async () => {
  const first = await StateDirLock.acquire(dir);
  await expect(StateDirLock.acquire(dir)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition') && (e as Error).message.includes(`(pid ${process.pid})`));
  await first.release();
  await (await StateDirLock.acquire(dir)).release();
});

it('a holder killed with SIGKILL leaves no stale lock behind (the kernel releases it)', async () => {
  const script = `import { StateDirLock } from ${JSON.stringify(join(__dirname, '../../electron/engine/sandbox/state-lock.ts'))};
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
  await expect(StateDirLock.acquireBoth(join(dir, 'state-b'), join(dir, 'run'))).rejects.toSatisfy((e) =>
    hasCode(e, 'FailedPrecondition') && (e as Error).message.includes(`run dir ${join(dir, 'run')} is in use by another Podscope engine (pid ${process.pid})`),
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
