/**
 * The README's CLI in a checkout runs the checkout's own build of its sources (bin/cli-cache.mjs), never a stale one:
 * a source whose file changed makes the next verb build again before it runs; each build keeps its own code cache.
 * Real esbuild, real CLI, a read-only engine on a temp state dir.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshBuild } from '../../bin/cli-cache.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/podscope-cli');
const exec = promisify(execFile);
let dir: string;

const podscope = (...args: string[]) =>
  exec(process.execPath, ['bin/podscope.mjs', ...args], { cwd: ROOT, env: { ...process.env, PODSCOPE_CLI: '' } });
const currentDir = async () => (JSON.parse(await readFile(join(CACHE, 'stamp.json'), 'utf8')) as { dir: string }).dir;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-cli-build-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the checkout build behind bin/podscope.mjs', () => {
  it('runs pods from a fresh build, and builds again after a source file changed', async () => {
    const flags = ['--state-dir', join(dir, 'state'), '--run-dir', join(dir, 'run')];
    const first = await podscope('pods', ...flags);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/^POD ID\s+CREATED\s+STATE/);
    expect(freshBuild(ROOT, CACHE)).toBeDefined();
    const before = await currentDir();
    // the run left its compiled code beside the build for the next one (bin/bundle-loader.mjs)
    const cache = await readFile(join(CACHE, before, 'podscope.cjs.v8-cache'));
    expect(JSON.parse(cache.subarray(0, cache.indexOf(10)).toString()).verbs).toContain('pods');

    // a save of a source the CLI is built from (its content as it was: only the file's times move)
    const source = join(ROOT, 'electron/cli/format.ts');
    const now = new Date(Date.now() - 5000);
    await utimes(source, now, now);
    expect(freshBuild(ROOT, CACHE)).toBeUndefined();

    // flags before the verb, as the README allows: the rebuilt CLI reads them the same way
    const second = await podscope(...flags, 'pods');
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe(first.stdout);
    expect(await currentDir()).not.toBe(before);
    expect(freshBuild(ROOT, CACHE)).toBe(join(CACHE, await currentDir(), 'podscope.cjs'));
  }, 120_000);
});
