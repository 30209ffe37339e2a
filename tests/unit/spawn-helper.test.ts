/**
 * SpawnHelperRunner: commands run by a helper process (not forked from the engine), with the same results as
 * NodeProcessRunner: input, output, exit codes, timeouts, cancellation and spawn failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
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

  it('fails a missing binary as the in-process runner does', async () => {
    await expect(runner.run({ file: '/nonexistent/bin', timeoutMs: 1000 })).rejects.toMatchObject({ code: 'RuntimeError' });
  });
});
