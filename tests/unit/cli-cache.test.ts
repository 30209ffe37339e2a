/**
 * The checkout's cached CLI build (bin/cli-cache.mjs) is used only while every file it was built from is unchanged:
 * an edit of any source (even one that keeps the size and sets the mtime back) makes the next run build again.
 */
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshBuild, packageJsonOf, rebuild } from '../../bin/cli-cache.mjs';

let root: string;
let cache: string;
const HOUR_AGO = new Date(Date.now() - 3600_000);

async function source(rel: string, text: string, mtime: Date = HOUR_AGO): Promise<void> {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), text);
  await utimes(join(root, rel), mtime, mtime);
}

/** a stand-in for esbuild: writes an entry and reports the given inputs, as its metafile does */
const fakeBuild = (inputs: string[], during?: () => Promise<void>) => async (outdir: string) => {
  await mkdir(outdir, { recursive: true });
  await writeFile(join(outdir, 'podscope.cjs'), 'exports.main = async () => 0;\n');
  await during?.();
  return { inputs: Object.fromEntries(inputs.map((i) => [i, { bytes: 1 }])) };
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'podscope-cli-cache-'));
  cache = join(root, 'node_modules/.cache/podscope-cli');
  await source('electron/cli/main.ts', 'export const a = 1;\n');
  await source('shared/x.ts', 'export const x = 1;\n');
  await source('node_modules/zod/package.json', '{"version":"4.0.0"}');
  await source('node_modules/zod/v4/core/core.js', 'export {};\n');
  await source('scripts/build-cli.mjs', '// build\n');
});
afterEach(() => rm(root, { recursive: true, force: true }));

const INPUTS = ['electron/cli/main.ts', 'shared/x.ts', 'node_modules/zod/v4/core/core.js', 'zod-english-only:/virtual/english-only.js'];

describe('freshBuild and rebuild', () => {
  it('has no build before the first one; after it, the build is fresh and is the one rebuild returned', async () => {
    expect(freshBuild(root, cache)).toBeUndefined();
    const entry = await rebuild(root, cache, fakeBuild(INPUTS), ['scripts/build-cli.mjs']);
    expect(entry).toMatch(/\/b-\d+-\d+\/podscope\.cjs$/);
    expect(freshBuild(root, cache)).toBe(entry);
  });

  it('is stale after a source edit, even one that keeps the size and sets the mtime back (ctime moves)', async () => {
    await rebuild(root, cache, fakeBuild(INPUTS), []);
    await source('shared/x.ts', 'export const y = 2;\n'); // same length, same (old) mtime
    expect(freshBuild(root, cache)).toBeUndefined();
  });

  it('is stale when a source it read is deleted, or when a file that shapes the build changes', async () => {
    await rebuild(root, cache, fakeBuild(INPUTS), ['scripts/build-cli.mjs']);
    await source('scripts/build-cli.mjs', '// build, changed\n');
    expect(freshBuild(root, cache)).toBeUndefined();
    await rebuild(root, cache, fakeBuild(INPUTS), ['scripts/build-cli.mjs']);
    await rm(join(root, 'electron/cli/main.ts'));
    expect(freshBuild(root, cache)).toBeUndefined();
  });

  it('records a dependency by its package.json: a reinstall (a new package.json) makes the build stale', async () => {
    expect(packageJsonOf('node_modules/@grpc/grpc-js/build/src/index.js')).toBe('node_modules/@grpc/grpc-js/package.json');
    expect(packageJsonOf('node_modules/a/node_modules/b/lib/x.js')).toBe('node_modules/a/node_modules/b/package.json');
    expect(packageJsonOf('electron/cli/main.ts')).toBe('electron/cli/main.ts');
    await rebuild(root, cache, fakeBuild(INPUTS), []);
    expect(freshBuild(root, cache)).toBeDefined();
    await source('node_modules/zod/package.json', '{"version":"4.0.1"}');
    expect(freshBuild(root, cache)).toBeUndefined();
  });

  it('never trusts a build of a file saved while it ran: the next run builds again', async () => {
    const entry = await rebuild(
      root,
      cache,
      fakeBuild(INPUTS, () => source('shared/x.ts', 'export const x = 3;\n', new Date())),
      [],
    );
    expect(entry).toMatch(/podscope\.cjs$/);
    expect(freshBuild(root, cache)).toBeUndefined();
  });

  it('keeps the current build and a few older ones (a long-running serve may still read their files)', async () => {
    const entries: string[] = [];
    for (let i = 0; i < 11; i++) {
      entries.push(await rebuild(root, cache, fakeBuild(INPUTS), []));
      await new Promise((r) => setTimeout(r, 2)); // distinct build directory names (ms + pid)
    }
    const dirs = (await readdir(cache)).filter((d) => d.startsWith('b-'));
    expect(dirs).toHaveLength(9);
    expect(dirs).toContain(entries.at(-1)!.split('/').at(-2));
    expect(freshBuild(root, cache)).toBe(entries.at(-1));
  });
});
