/** Flags written before the verb (`podscope --state-dir X images load FILE`) reach it as if written after it. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { commandFirst } from '../../electron/cli/command-line';
import { main } from '../../electron/cli/main';
import { subcommands as imagesSubcommands } from '../../electron/cli/commands/images';
import { subcommands as labSubcommands } from '../../electron/cli/commands/lab';

const COMMANDS = ['pods', 'images', 'load', 'pull', 'rmi', 'inspecti', 'lab', 'exec'];
const SUBCOMMANDS: Record<string, readonly string[]> = { images: imagesSubcommands, lab: labSubcommands };
const reorder = (argv: string[]) =>
  commandFirst(
    argv,
    (w) => COMMANDS.includes(w),
    (c) => SUBCOMMANDS[c] ?? [],
  );

describe('commandFirst', () => {
  it('puts leading engine flags after the command, and after its subcommand when it has one', () => {
    expect(reorder(['--state-dir', '/x', 'images', 'load', 'f.tar'])).toEqual(['images', 'load', '--state-dir', '/x', 'f.tar']);
    expect(reorder(['--state-dir', '/x', 'images', '-q'])).toEqual(['images', '--state-dir', '/x', '-q']);
    expect(reorder(['--state-dir', '/x', 'load', 'f.tar'])).toEqual(['load', '--state-dir', '/x', 'f.tar']);
    expect(reorder(['--state-dir', '/x', 'pull', 'busybox'])).toEqual(['pull', '--state-dir', '/x', 'busybox']);
    expect(reorder(['--state-dir', '/x', 'rmi', 'busybox'])).toEqual(['rmi', '--state-dir', '/x', 'busybox']);
    expect(reorder(['--state-dir', '/x', 'inspecti', 'busybox'])).toEqual(['inspecti', '--state-dir', '/x', 'busybox']);
    expect(reorder(['--state-dir', '/x', 'lab', 'run', 'n.conflist'])).toEqual(['lab', 'run', '--state-dir', '/x', 'n.conflist']);
  });

  it('takes a value by the flag type: a string flag always does (even a command-like word), a boolean never', () => {
    expect(reorder(['--state-dir', 'pods', 'pods'])).toEqual(['pods', '--state-dir', 'pods']);
    expect(reorder(['--no-probe-on-ready', 'pods', '-q'])).toEqual(['pods', '--no-probe-on-ready', '-q']);
    expect(reorder(['--cni-bin-dir', '/a', '--cni-bin-dir=/b', 'pods'])).toEqual(['pods', '--cni-bin-dir', '/a', '--cni-bin-dir=/b']);
    expect(reorder(['--endpoint', 'unix:///c.sock', 'images'])).toEqual(['images', '--endpoint', 'unix:///c.sock']);
  });

  it('leaves a line whose flags come after the command as it is; the words after a command keep their order', () => {
    const after = ['images', 'load', 'f.tar', '--state-dir', '/x'];
    expect(reorder(after)).toEqual(after);
    expect(reorder(['--state-dir', '/x', 'exec', '-s', 'id', 'ls', '--state-dir'])).toEqual([
      'exec',
      '--state-dir',
      '/x',
      '-s',
      'id',
      'ls',
      '--state-dir',
    ]);
    expect(reorder(['--help'])).toEqual(['--help']);
    expect(reorder(['--state-dir', '/x'])).toEqual(['--state-dir', '/x']);
  });
});

describe('podscope main with flags before the verb', () => {
  let dir: string;
  let stderr: string;
  let stdout: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-cli-args-'));
    stderr = '';
    stdout = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('`--state-dir X images load FILE` reaches load (its error names the file), as `images load FILE --state-dir X` does', async () => {
    const missing = join(dir, 'missing.tar');
    const first = await main(['--state-dir', join(dir, 'state'), 'images', 'load', missing]);
    const firstErr = stderr;
    stderr = '';
    const after = await main(['images', 'load', missing, '--state-dir', join(dir, 'state')]);
    expect(firstErr).not.toMatch(/at most one image reference/);
    expect(firstErr).toContain(missing);
    expect(first).toBe(after);
    expect(stderr).toBe(firstErr);
  });

  it('`--state-dir X images` lists the (empty) store at X, as `images --state-dir X` does', async () => {
    expect(await main(['--state-dir', join(dir, 'state'), 'images'])).toBe(0);
    const first = stdout;
    stdout = '';
    expect(await main(['images', '--state-dir', join(dir, 'state')])).toBe(0);
    expect(first).toMatch(/^IMAGE\s+TAG\s+IMAGE ID\s+SIZE\n$/);
    expect(stdout).toBe(first);
  });
});
