// A checkout's own build of the CLI, so `podscope` starts from bundled JavaScript instead of compiling TypeScript
// through tsx on every run (about 1.4 s against 0.2 s here), and is never stale: every file esbuild read for it is
// recorded with its mtime, ctime and size, and a build whose record no longer matches the tree is rebuilt before it
// runs. ctime is in the record because mtime can be set back (cp -p, tar, touch -d) while ctime cannot. A dependency
// is recorded by its package.json (npm rewrites it with every install or version change), not file by file: about
// 350 stats instead of 600 on every run. (A hand edit inside node_modules is not seen; the sources' edits all are.)
//
// Layout: <cache>/stamp.json names the current build directory (<cache>/b-<time>-<pid>/) and its inputs. A rebuild
// writes a new directory and then renames a new stamp over the old one, so a concurrent run sees either build whole.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** 3: the build is one CommonJS script, podscope.cjs (2 was ES module chunks behind podscope.mjs) */
const STAMP_VERSION = 3;
/** the build's entry, which bin/bundle-loader.mjs runs; its code cache is kept beside it, so it goes with the build */
export const ENTRY = 'podscope.cjs';
/**
 * An input modified this close to (or after) the start of its build may have changed while esbuild read it: it is
 * recorded as never matching, so the next run builds again rather than trusting a build of a half-saved file.
 * (File times come from the kernel's coarse clock, a few ms behind Date.now().)
 */
const RACE_WINDOW_MS = 1000;
/**
 * Builds other than the current one are kept for a while: a long-running `podscope serve` or `cri` from an older
 * build may still read its files (its source map, its native addon).
 */
const KEEP_OLD_BUILDS_MS = 24 * 3600_000;
const MAX_OLD_BUILDS = 8;

/** @param {import('node:fs').Stats} st */
function signature(st) {
  return [st.mtimeMs, st.ctimeMs, st.size];
}

/**
 * The current build's entry file if every input it was built from is unchanged, else undefined.
 * @param {string} root the checkout
 * @param {string} cacheDir
 * @returns {string | undefined}
 */
export function freshBuild(root, cacheDir) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(cacheDir, 'stamp.json'), 'utf8'));
  } catch {
    return undefined;
  }
  if (stamp?.version !== STAMP_VERSION || typeof stamp.dir !== 'string' || typeof stamp.inputs !== 'object') return undefined;
  // every run of every verb pays this loop (~390 files): no path.join, no exception for a missing file, no arrays
  const base = root.endsWith('/') ? root : `${root}/`;
  for (const file in stamp.inputs) {
    const want = stamp.inputs[file];
    const st = statSync(base + file, { throwIfNoEntry: false });
    if (st === undefined || !Array.isArray(want) || st.mtimeMs !== want[0] || st.ctimeMs !== want[1] || st.size !== want[2])
      return undefined;
  }
  return join(cacheDir, stamp.dir, ENTRY);
}

/**
 * Builds the CLI into a new directory of the cache and makes it current.
 * @param {string} root
 * @param {string} cacheDir
 * @param {(outdir: string) => Promise<{ inputs: Record<string, unknown> }>} build returns esbuild's metafile
 * @param {string[]} alsoWatch files that shape the build without being bundled (the build script, package.json)
 * @returns {Promise<string>} the new build's entry file
 */
export async function rebuild(root, cacheDir, build, alsoWatch) {
  const started = Date.now();
  const dir = `b-${started}-${process.pid}`;
  mkdirSync(cacheDir, { recursive: true });
  const meta = await build(join(cacheDir, dir));
  const inputs = {};
  // a plugin's virtual module ("namespace:path") is no file: what it stands for is an input of its own
  const files = new Set(
    Object.keys(meta.inputs)
      .filter((f) => !/^[\w-]+:/.test(f))
      .map(packageJsonOf),
  );
  for (const file of [...files, ...alsoWatch]) {
    const sig = signature(statSync(join(root, file)));
    inputs[file] = sig[0] >= started - RACE_WINDOW_MS ? [-1, -1, -1] : sig;
  }
  const tmp = join(cacheDir, `stamp.json.${process.pid}`);
  writeFileSync(tmp, JSON.stringify({ version: STAMP_VERSION, dir, inputs }));
  renameSync(tmp, join(cacheDir, 'stamp.json'));
  pruneOldBuilds(cacheDir, dir, started);
  return join(cacheDir, dir, ENTRY);
}

/** `node_modules/@a/b/dist/x.js` ⇒ `node_modules/@a/b/package.json`; a file of the checkout stands for itself */
export function packageJsonOf(file) {
  const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  return m ? `${m[1]}/package.json` : file;
}

function pruneOldBuilds(cacheDir, current, now) {
  const old = readdirSync(cacheDir)
    .map((name) => /^b-(\d+)-\d+$/.exec(name))
    .filter((m) => m !== null && m[0] !== current)
    .map((m) => ({ name: m[0], time: Number(m[1]) }))
    .sort((a, b) => b.time - a.time);
  old.forEach((b, i) => {
    if (i >= MAX_OLD_BUILDS || now - b.time > KEEP_OLD_BUILDS_MS) rmSync(join(cacheDir, b.name), { recursive: true, force: true });
  });
}
