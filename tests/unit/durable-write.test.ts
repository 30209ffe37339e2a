import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileDurable } from '../../electron/engine/os/durable-write';

describe('writeFileDurable', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('replaces the content and leaves no temp file behind', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-durable-'));
    const file = join(dir, 'rec.json');
    await writeFile(file, 'old');
    await writeFileDurable(file, 'new');
    expect(await readFile(file, 'utf8')).toBe('new');
    expect(await readdir(dir)).toEqual(['rec.json']);
  });

  it('creates a new file with mode 0600 unless told otherwise', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-durable-'));
    await writeFileDurable(join(dir, 'a'), 'x');
    await writeFileDurable(join(dir, 'b'), 'x', { mode: 0o644 });
    expect((await stat(join(dir, 'a'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'b'))).mode & 0o777).toBe(0o644);
  });

  it('creates the parent directory only when asked', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-durable-'));
    await expect(writeFileDurable(join(dir, 'sub', 'f'), 'x')).rejects.toThrow(/ENOENT/);
    await writeFileDurable(join(dir, 'sub', 'f'), 'x', { mkdirMode: 0o700 });
    expect(await readFile(join(dir, 'sub', 'f'), 'utf8')).toBe('x');
  });

  it('removes its temp file when the rename fails (the target is a directory)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-durable-'));
    await writeFileDurable(join(dir, 'd', 'keep'), 'x', { mkdirMode: 0o700 });
    await expect(writeFileDurable(join(dir, 'd'), 'y')).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['d']);
  });

  it('two overlapping writes of one file each land whole', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-durable-'));
    const file = join(dir, 'f');
    const a = 'a'.repeat(200_000);
    const b = 'b'.repeat(200_000);
    await Promise.all([writeFileDurable(file, a), writeFileDurable(file, b)]);
    expect([a, b]).toContain(await readFile(file, 'utf8'));
    expect(await readdir(dir)).toEqual(['f']);
  });

  it('writes through the temp path the caller names, and removes it when the rename fails', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-durable-'));
    // a temp path in a missing directory cannot be opened: proof the named path is the one used
    await expect(writeFileDurable(join(dir, 'f'), 'x', { tempPath: join(dir, 'missing', 't') })).rejects.toThrow(/ENOENT/);
    await writeFileDurable(join(dir, 'd', 'keep'), 'x', { mkdirMode: 0o700 });
    await expect(writeFileDurable(join(dir, 'd'), 'y', { tempPath: join(dir, 'd.tmp-1-ab') })).rejects.toThrow();
    await writeFileDurable(join(dir, 'f'), 'z', { tempPath: join(dir, 'f.tmp-1-cd') });
    expect(await readFile(join(dir, 'f'), 'utf8')).toBe('z');
    expect((await readdir(dir)).sort()).toEqual(['d', 'f']);
  });
});
