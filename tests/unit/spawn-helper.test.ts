/**
 * SpawnHelperRunner: commands run by a helper process (not forked from the engine), with the same results as
 * NodeProcessRunner: input, output, exit codes, timeouts, cancellation and spawn failures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { holdFileLockInProcess, type HeldFileLock } from '../../electron/engine/os/file-lock';
import { SpawnHelperRunner } from '../../electron/engine/os/spawn-helper';

const runner = new SpawnHelperRunner();
beforeAll(() => runner.ready());
afterAll(() => runner.close());

describe('SpawnHelperRunner', () => {
  it('starts the command from the helper, not from the engine process', async () => {
    const r = await runner.run({ file: 'sh', args: ['-c', 'echo $PPID'], timeoutMs: 10_000 });
    expect(r.exitCode).toBe(0);
    expect(Number(r.stdout.trim())).not.toBe(process.pid);
  });

  it('gives stdin, and returns stdout, stderr and the exit code as the in-process runner does', async () => {
    const req = { file: 'sh', args: ['-c', 'cat; echo oops >&2; exit 3'], input: 'hello\n', timeoutMs: 10_000 };
    const [viaHelper, direct] = await Promise.all([runner.run(req), new NodeProcessRunner().run(req)]);
    expect(viaHelper).toMatchObject({ exitCode: 3, signal: null, stdout: 'hello\n', stderr: 'oops\n', timedOut: false, canceled: false });
    expect({ ...viaHelper, durationMs: 0 }).toEqual({ ...direct, durationMs: 0 });
  });

  it('kills the process group on a timeout or an abort', async () => {
    const timed = await runner.run({ file: 'sh', args: ['-c', 'sleep 30 & sleep 30'], timeoutMs: 200 });
    expect(timed).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const aborted = await runner.run({ file: 'sleep', args: ['30'], timeoutMs: 10_000, signal: ac.signal });
    expect(aborted).toMatchObject({ canceled: true, signal: 'SIGKILL' });
    expect(aborted.durationMs).toBeLessThan(5000);
  });

  it('a command canceled before the helper said it started, and gone by the time it does, is no error in the engine', async () => {
    // The race seen in CI: the abort comes before the helper's "started, pid N" reply, so the group is killed on that
    // reply, by which time it may have exited (ESRCH). That kill may fail; it must not throw out of the reply handler.
    const realKill = process.kill.bind(process);
    const groupKills: number[] = [];
    const kill = vi.spyOn(process, 'kill').mockImplementation((pid: number, signal?: string | number) => {
      if (pid < 0) {
        groupKills.push(pid);
        throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH', errno: -3, syscall: 'kill' });
      }
      return realKill(pid, signal);
    });
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const ac = new AbortController();
      const run = runner.run({ file: 'sleep', args: ['0.2'], timeoutMs: 10_000, signal: ac.signal });
      ac.abort();
      const r = await run;
      expect(r.canceled).toBe(true);
      expect(groupKills.length).toBeGreaterThan(0);
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      kill.mockRestore();
    }
  });

  it('while the helper starts, a large process waits for it and a small one forks the command itself', async () => {
    const ppidOfFirst = async (forkIsCostly: boolean) => {
      const fresh = new SpawnHelperRunner(undefined, { forkIsCostly: () => forkIsCostly });
      try {
        // the first command of a fresh runner: the helper is only now starting
        const r = await fresh.run({ file: 'sh', args: ['-c', 'echo $PPID'], timeoutMs: 10_000 });
        expect(r.exitCode).toBe(0);
        return Number(r.stdout.trim());
      } finally {
        fresh.close();
      }
    };
    expect(await ppidOfFirst(true)).not.toBe(process.pid);
    expect(await ppidOfFirst(false)).toBe(process.pid);
  });

  it('fails a missing binary as the in-process runner does', async () => {
    await expect(runner.run({ file: '/nonexistent/bin', timeoutMs: 1000 })).rejects.toMatchObject({ code: 'RuntimeError' });
  });
});

describe('SpawnHelperRunner.holdFileLock', () => {
  it('holds an exclusive flock for the caller until release(), and the lock ends with the helper', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podscope-helper-lock-'));
    const file = join(dir, 'store.lock');
    const own = new SpawnHelperRunner();
    try {
      await own.ready();
      const held = await own.holdFileLock(file, 5);
      expect(held).toBeDefined();
      // another holder (here: in-process, no wait) is refused while the helper holds it
      expect(await holdFileLockInProcess(file, 0)).toBeUndefined();
      // a second helper request waits and gets it once the first lets go
      const second = own.holdFileLock(file, 5);
      held!.release();
      const next = await second;
      expect(next).toBeDefined();
      expect(await holdFileLockInProcess(file, 0)).toBeUndefined();
      // the helper's end (the engine's exit) drops it
      own.close();
      let after: HeldFileLock | undefined;
      for (let i = 0; i < 50 && !after; i++) {
        after = await holdFileLockInProcess(file, 0);
        if (!after) await new Promise((r) => setTimeout(r, 20));
      }
      expect(after).toBeDefined();
      after!.release();
    } finally {
      own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
