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
  await (await StateDirLock.acquire(dir)).release();
});
