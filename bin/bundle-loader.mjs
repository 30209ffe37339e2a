// Runs the CLI bundle (scripts/build-cli.mjs: one CommonJS script) from a V8 code cache kept beside it, so a verb
// starts from bytecode instead of parsing and compiling JavaScript: that was about half of a `pods`' start-up, and
// Node 20 has no compile cache of its own for it (module.enableCompileCache is Node 22).
//
// The cache is only ever used with the bundle it was made from: its header holds the bundle's identity (device,
// inode, size, mtime, ctime, read from the same open file as the source), and a bundle rewritten or replaced in any
// way (a new build, a copy over it, a touch) does not match, so its cache is ignored and made again. V8 checks the
// rest itself (its version, its flags, the source's length) and rejects a cache that does not fit; that is made again
// too. A cache holds the code compiled by the runs that made it: each verb's first run folds in what it compiled
// (the header lists the verbs), so every verb's second run starts compiled. Where the cache cannot be written (a
// read-only install), every run compiles, as it would without it.
import { isAscii } from 'node:buffer';
import { closeSync, fstatSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';

const FORMAT = 1;

/** the wrapper of a CommonJS module, with the bundle's first line on the same line (its map stays line-true) */
const WRAPPER = '(function (exports, require, module, __filename, __dirname) {';

/** @param {import('node:fs').Stats} st */
function identity(st) {
  return [st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs];
}

/**
 * @param {string} cacheFile
 * @param {number[]} bundle the identity of the bundle being run
 * @returns {{ verbs: string[], data: Buffer } | 'none' | 'stale'} the cache made from this very bundle; 'stale' for
 * one made from another (or unreadable)
 */
function readCodeCache(cacheFile, bundle) {
  let buf;
  try {
    buf = readFileSync(cacheFile);
  } catch {
    return 'none';
  }
  const nl = buf.indexOf(10);
  let head;
  try {
    head = JSON.parse(buf.subarray(0, Math.max(nl, 0)).toString('utf8'));
  } catch {
    return 'stale';
  }
  if (head?.format !== FORMAT || !Array.isArray(head.verbs) || JSON.stringify(head.bundle) !== JSON.stringify(bundle)) return 'stale';
  return { verbs: head.verbs, data: buf.subarray(nl + 1) };
}

/**
 * Loads a CommonJS bundle through its code cache.
 * @param {string} file the bundle
 * @param {string} [cacheFile] where its code cache is kept (default: beside it)
 * @returns {{ exports: any, cache: 'used' | 'none' | 'stale' | 'rejected', keep(verb: string): boolean }} `cache`: what
 * became of the cache (none; made from another bundle; rejected by V8; used); `keep`, called after a run of `verb`,
 * writes the cache when it lacks what this run compiled (none, stale or rejected, or a verb it has not seen) and says
 * whether it wrote it
 */
export function loadBundle(file, cacheFile = `${file}.v8-cache`) {
  const fd = openSync(file, 'r');
  let source;
  let bundle;
  try {
    bundle = identity(fstatSync(fd));
    const bytes = readFileSync(fd);
    // the build leaves only ASCII (scripts/build-cli.mjs): a copy into a one-byte string, no UTF-8 decoding
    source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  } finally {
    closeSync(fd);
  }
  const read = readCodeCache(cacheFile, bundle);
  const cached = typeof read === 'object' ? read : undefined;
  const script = new vm.Script(`${WRAPPER}${source}\n})`, {
    filename: file,
    ...(cached && { cachedData: cached.data }),
    // no import() callback: a script compiled from a code cache loses it (Node 20), so the build has no import()
  });
  const rejected = cached !== undefined && script.cachedDataRejected === true;
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  return {
    exports: module.exports,
    cache: cached === undefined ? read : rejected ? 'rejected' : 'used',
    keep(verb) {
      if (cached && !rejected && cached.verbs.includes(verb)) return false;
      const verbs = cached && !rejected ? [...cached.verbs, verb] : [verb];
      const tmp = `${cacheFile}.${process.pid}`;
      try {
        const head = Buffer.from(`${JSON.stringify({ format: FORMAT, bundle, verbs })}\n`);
        writeFileSync(tmp, Buffer.concat([head, script.createCachedData()]));
        // a concurrent reader sees the old cache or the new one whole
        renameSync(tmp, cacheFile);
        return true;
      } catch {
        try {
          rmSync(tmp, { force: true });
        } catch {
          // nothing was written
        }
        return false;
      }
    },
  };
}
