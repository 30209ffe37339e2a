import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { MAX_STDERR_BYTES, MAX_STDOUT_BYTES, NodeProcessRunner } from '../../electron/engine/os/exec';

const runner = new NodeProcessRunner();
/** Live (not zombie) members of a process group: a killed orphan stays a zombie until init gets round to it. */
const groupAlive = (pgid: number) =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .some((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(f[2]) === pgid && f[0] !== 'Z';
      } catch {
        return false;
      }
    });

/** A process that exists and is not a zombie. */
const liveProcess = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
};

describe('NodeProcessRunner', () => {
  it('a timeout kills the whole process group and returns even when a grandchild holds the pipes', async () => {
    // the shell prints its own pid (the group id) and its backgrounded grandchild's, which inherits stdout/stderr
    const r = await runner.run({ file: 'sh', args: ['-c', 'sleep 30 & echo "$$ $!"; wait'], timeoutMs: 300 });
    const [pgid, grandchild] = r.stdout.trim().split(' ').map(Number) as [number, number];
    expect(pgid).toBeGreaterThan(1);
    expect(grandchild).toBeGreaterThan(1);
    expect(grandchild).not.toBe(pgid);
    expect(r).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    // by pid: the grandchild is gone (or a zombie waiting for init), not merely its parent; a SIGKILL is delivered
    // when the process next runs, which a busy machine may put off for a few ms (the sleep would live 30 s)
    await vi.waitFor(() => expect(liveProcess(grandchild)).toBe(false), { timeout: 5000 });
    await vi.waitFor(() => expect(groupAlive(pgid)).toBe(false), { timeout: 5000 });
  });

  it('an abort does the same', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await runner.run({ file: 'sh', args: ['-c', 'sleep 30 & sleep 30'], timeoutMs: 60_000, signal: ac.signal });
    expect(r.canceled).toBe(true);
  });

  it('keeps at most 16 MiB of stdout and the last 64 KiB of stderr, and says what it dropped', async () => {
    const r = await runner.run({
      file: 'sh',
      args: ['-c', 'head -c 20000000 /dev/zero | tr "\\\\0" a; head -c 100000 /dev/zero | tr "\\\\0" b >&2; echo END >&2'],
      timeoutMs: 30_000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith('a'.repeat(1000))).toBe(true);
    expect(r.stdout.length).toBeLessThan(MAX_STDOUT_BYTES + 100);
    expect(r.stdout).toMatch(/\[… \d+ more bytes not kept\]$/);
    expect(r.stderr.endsWith('END\n')).toBe(true);
    expect(r.stderr.length).toBeLessThan(MAX_STDERR_BYTES + 100);
  });
});
