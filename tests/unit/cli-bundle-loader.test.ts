/**
 * The CLI bundle runs from a V8 code cache (bin/bundle-loader.mjs), and a cache is only ever used with the bundle it
 * was made from: V8 itself accepts a cache made from any source of the same length and runs its stale code, so a
 * rebuilt or replaced bundle must be told apart by the loader.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadBundle } from '../../bin/bundle-loader.mjs';
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { cjsPrologue, escapeNonAscii, lazyBuiltins } from '../../scripts/build-cli.mjs';

let dir: string;
let bundle: string;

/** a bundle as esbuild writes one: strict CommonJS, exporting what a run calls */
const source = (answer: string) =>
  `"use strict";exports.main = function main() { return ${JSON.stringify(answer)}; };exports.where = () => [__filename, require('./beside.cjs')];\n`;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-bundle-loader-'));
  bundle = join(dir, 'podscope.cjs');
  await writeFile(bundle, source('one'));
  await writeFile(join(dir, 'beside.cjs'), 'module.exports = "beside";\n');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const run = (file = bundle, cacheFile?: string) => {
  const loaded = loadBundle(file, cacheFile);
  return { loaded, answer: (loaded.exports.main as () => string)() };
};

/**
 * A run in a process of its own, as the CLI's are: within one process V8 reuses what it compiled of a source it has
 * seen and never looks at the cache it is given.
 */
async function runInChild(verb: string): Promise<{ cache: string; answer: string; kept: boolean }> {
  const loader = new URL('../../bin/bundle-loader.mjs', import.meta.url).href;
  const script = `const { loadBundle } = await import(${JSON.stringify(loader)});
    const l = loadBundle(${JSON.stringify(bundle)});
    const answer = l.exports.main();
    console.log(JSON.stringify({ cache: l.cache, answer, kept: l.keep(${JSON.stringify(verb)}) }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  return JSON.parse(stdout) as { cache: string; answer: string; kept: boolean };
}

describe('loadBundle', () => {
  it('runs the bundle as a CommonJS module beside its files; the next run starts from the cache the first one left', async () => {
    const first = run();
    expect(first.answer).toBe('one');
    expect((first.loaded.exports.where as () => unknown)()).toEqual([bundle, 'beside']);
    expect(first.loaded.cache).toBe('none');
    expect(first.loaded.keep('pods')).toBe(true);
    expect(await runInChild('pods')).toEqual({ cache: 'used', answer: 'one', kept: false });
  });

  it('folds each verb in once: a verb the cache has seen writes nothing, a new one is added', async () => {
    run().loaded.keep('pods');
    expect(run().loaded.keep('pods')).toBe(false);
    expect(run().loaded.keep('images')).toBe(true);
    const header = (await readFile(`${bundle}.v8-cache`)).subarray(0, 200).toString('latin1').split('\n')[0]!;
    expect(JSON.parse(header).verbs).toEqual(['pods', 'images']);
    expect(run().loaded.keep('images')).toBe(false);
  });

  it('never runs the code of another bundle: a rebuild of the same length with the old times runs the new code', async () => {
    run().loaded.keep('pods');
    const before = await stat(bundle);
    await writeFile(bundle, source('two')); // same length
    await utimes(bundle, before.atime, before.mtime);
    const after = run();
    expect(after.answer).toBe('two');
    expect(after.loaded.cache).toBe('stale');
    // and the cache is made again, for the new bundle
    expect(after.loaded.keep('pods')).toBe(true);
    expect(run().loaded.cache).toBe('used');
  });

  it('makes again a cache V8 rejects (another Node, other flags, a damaged file) and runs the bundle meanwhile', async () => {
    run().loaded.keep('pods');
    const file = await readFile(`${bundle}.v8-cache`);
    const nl = file.indexOf(10);
    await writeFile(`${bundle}.v8-cache`, Buffer.concat([file.subarray(0, nl + 1), Buffer.alloc(file.length - nl - 1, 7)]));
    expect(await runInChild('pods')).toEqual({ cache: 'rejected', answer: 'one', kept: true });
    expect(await runInChild('pods')).toEqual({ cache: 'used', answer: 'one', kept: false });
  });

  it('treats an unreadable header as no cache', async () => {
    await writeFile(`${bundle}.v8-cache`, 'not a header');
    const r = run();
    expect(r.loaded.cache).toBe('stale');
    expect(r.answer).toBe('one');
  });

  it('runs without a cache where none can be written (a read-only install), leaving nothing behind', async () => {
    const ro = join(dir, 'ro');
    const cacheFile = join(ro, 'podscope.cjs.v8-cache');
    await writeFile(join(dir, 'ro'), ''); // a file where the cache's directory would be: no write can succeed, as root too
    const r = run(bundle, cacheFile);
    expect(r.answer).toBe('one');
    expect(r.loaded.keep('pods')).toBe(false);
    expect((await readdir(dir)).sort()).toEqual(['beside.cjs', 'podscope.cjs', 'ro']);
  });
});

describe('the bundle is ASCII (read as Latin-1, one byte a character)', () => {
  it('escapes what esbuild leaves in regular expressions and comments, and each expression matches as before', () => {
    const cases: Array<[string, string]> = [
      ['/(\\d+)(us|µs|ns)/', '15µs'],
      ['/\\{0x…(?:, 0x…)*\\}/', '{0x…, 0x…}'],
      ['/[…µ]+/u', 'a…µb'],
      ['/\\µ/', 'µ'],
      ['/😀+/u', '😀😀'],
      ['/😀/', 'x😀'],
    ];
    for (const [literal, input] of cases) {
      const escaped = escapeNonAscii(`// naïve\n${literal}`);
      expect(escaped).toMatch(/^[\x00-\x7f]*$/);
      const before = new Function(`return ${literal}`)() as RegExp;
      const after = new Function(`${escaped.split('\n')[0]}\nreturn ${escaped.split('\n')[1]}`)() as RegExp;
      expect(after.exec(input), literal).toEqual(before.exec(input));
      expect(before.exec(input), literal).not.toBeNull();
    }
  });
});

describe('the built-ins a verb may not need are loaded on first use', () => {
  it('requires a lazy built-in only when it is used, and it then behaves as the module itself', () => {
    const text = lazyBuiltins(
      'exports.c = require("node:crypto"); exports.again = require("node:crypto"); exports.p = require("node:path"); exports.z = x.require("zlib");',
    );
    expect(text).toContain('exports.c = __lazyR("node:crypto")');
    expect(text).toContain('x.require("zlib")');
    const required: string[] = [];
    const real = createRequire(import.meta.url);
    const exports: { c?: typeof Crypto; again?: unknown } = {};
    const x = { require: (n: string) => n };
    new Function('exports', 'require', '__filename', 'x', `${cjsPrologue.js}\n${text}`)(
      exports,
      (n: string) => (required.push(n), real(n)),
      join(tmpdir(), 'podscope.cjs'),
      x,
    );
    expect(required).toEqual(['node:url', 'node:path']);
    expect(exports.again).toBe(exports.c);
    expect(exports.c!.randomBytes(4)).toHaveLength(4);
    expect(required).toEqual(['node:url', 'node:path', 'node:crypto']);
    expect(Object.keys(exports.c!)).toEqual(Object.keys(real('node:crypto')));
    expect('createHash' in exports.c!).toBe(true);
    expect({ ...exports.c }.createHash).toBe(real('node:crypto').createHash);
  });
});
