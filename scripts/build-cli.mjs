/**
 * The esbuild options of the CLI bundle, shared by `npm run build` (scripts/build-electron.mjs → dist/cli) and the
 * checkout's own cached build (bin/cli-cache.mjs → node_modules/.cache/podscope-cli), so both run the same code.
 *
 * One CommonJS script, `podscope.cjs`, which bin/bundle-loader.mjs compiles with a V8 code cache kept beside it: a
 * verb then starts from bytecode instead of parsing JavaScript (about half of a `pods`' start-up was spent compiling
 * it). Node 20 caches code only for scripts (vm.Script), not ES modules, hence CommonJS and one file. A verb still
 * evaluates only what it imports: each command and the heavy parts behind it (the engine, gRPC, protobuf, yaml, the
 * image store) are reached through `import()`, which esbuild turns into a module initialised on first use.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** bundled CommonJS dependencies (grpc-js, ws) call require(); give ESM output (the Electron main) a real one */
export const esmRequire = {
  js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
};

/** ws's optional native helpers are not needed (it falls back to JavaScript) */
export const optionalNatives = ['bufferutil', 'utf-8-validate'];

/**
 * node-unix-socket (the client of conmon's SOCK_SEQPACKET attach socket) is a prebuilt N-API addon: its .node file is
 * copied next to each bundle that uses it, and its loader (which probes a package per platform through __dirname,
 * which an ES module bundle does not have) becomes one require of that file, resolved beside the bundle.
 */
export function nativeAddon(bundleDir) {
  const file = `node-unix-socket.linux-${process.arch}-gnu.node`;
  return {
    name: 'native-addon',
    setup(b) {
      b.onLoad({ filter: /node-unix-socket[\\/]js[\\/]addon\.js$/ }, async () => {
        const require = createRequire(join(root, 'package.json'));
        const from = join(dirname(require.resolve(`node-unix-socket-linux-${process.arch}-gnu/package.json`)), file);
        await mkdir(bundleDir, { recursive: true });
        await copyFile(from, join(bundleDir, file));
        return { contents: `module.exports = require('./${file}');`, loader: 'js' };
      });
      b.onResolve({ filter: /\.node$/ }, (a) => ({ path: a.path, external: true }));
    },
  };
}

/**
 * zod's `z` namespace (and its core's) re-exports all of its ~60 locales (340 kB of the 850 kB it adds), which a bundler cannot shake
 * off a namespace object; nothing here selects a locale (zod's default is English), so the CLI gets English only,
 * about a fifth less code for every verb that loads zod to compile and evaluate.
 */
function zodEnglishOnly() {
  return {
    name: 'zod-english-only',
    setup(b) {
      b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (a) =>
        /[\\/]zod[\\/]v4[\\/](classic[\\/]external|core[\\/]index)\.js$/.test(a.importer)
          ? {
              path: join(dirname(a.importer), '../locales/en.js').replace(/en\.js$/, 'english-only.js'),
              namespace: 'zod-english-only',
              pluginData: a.importer,
            }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (a) => ({
        contents: `export { default as en } from ${JSON.stringify(join(dirname(a.pluginData), '../locales/en.js'))};`,
        resolveDir: dirname(a.pluginData),
        loader: 'js',
      }));
    },
  };
}

/**
 * `import.meta.url` in the sources (browser-host finds the built UI relative to itself) is the bundle's own URL, as
 * it was in an ES module bundle; defined here so the file runs the same through the loader or a plain require().
 */
export const cjsPrologue = {
  js: `"use strict";var __podscopeBundleUrl=require("node:url").pathToFileURL(__filename).href;${lazyRequireSource()}`,
};

/**
 * Node built-ins that a verb loads only when it uses them. The engine's modules import crypto, child_process,
 * readline (and gRPC, ws and node-tar import http2, tls, zlib…) at the top, and a verb initialises every module of
 * the engine, so `pods` compiled each of them (crypto and child_process about 5 ms each) without calling one
 * function of theirs. In the bundle, their `require("…")` becomes `__lazyR("…")` (same length, so the source map
 * stays true), which gives a stand-in that loads the module on its first use (a property read, a call, an
 * enumeration); the sources are untouched.
 */
export const LAZY_BUILTINS = [
  'assert',
  'child_process',
  'crypto',
  'dns',
  'http',
  'http2',
  'https',
  'readline',
  'tls',
  'worker_threads',
  'zlib',
];

/**
 * `__lazyR(name)`: one stand-in per module name. Its own-property answers say configurable, as a proxy over an empty
 * target must; `import * as` and default imports (esbuild's __toESM) enumerate it, which loads the module then.
 */
function lazyRequireSource() {
  return (
    'var __lazyR=((l)=>(n)=>l.get(n)??(l.set(n,((m)=>{const r=()=>m??=require(n);' +
    'return new Proxy({},{get:(_,k)=>Reflect.get(r(),k),has:(_,k)=>Reflect.has(r(),k),set:(_,k,v)=>Reflect.set(r(),k,v),' +
    'ownKeys:()=>Reflect.ownKeys(r()),getPrototypeOf:()=>Reflect.getPrototypeOf(r()),' +
    'getOwnPropertyDescriptor:(_,k)=>{const d=Reflect.getOwnPropertyDescriptor(r(),k);return d&&{...d,configurable:true}}})})()),l.get(n)))(new Map);'
  );
}

/** `require("node:crypto")` ⇒ `__lazyR("node:crypto")` for the LAZY_BUILTINS, in the bundle's text */
export function lazyBuiltins(text) {
  const names = LAZY_BUILTINS.join('|');
  return text.replace(new RegExp(`(?<![\\w$.])require\\("((?:node:)?(?:${names}))"\\)`, 'g'), '__lazyR("$1")');
}

/**
 * Builds the CLI into `outdir`: `podscope.cjs` (exports `main(argv)` and `verbOf(argv)`), its source map and the
 * native addon beside it.
 * @param {{ outdir: string, quiet?: boolean, logLevel?: import('esbuild').LogLevel }} o
 * @returns {Promise<import('esbuild').Metafile>}
 */
export async function buildCli(o) {
  const { build } = await import('esbuild');
  const result = await build({
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    // less text to read and less bytecode to keep; names are kept, so stack traces and class names read as in the
    // sources, and the source maps lead back to them (node --enable-source-maps)
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: o.logLevel ?? (o.quiet ? 'warning' : 'info'),
    absWorkingDir: root,
    entryPoints: { podscope: 'electron/cli/main.ts' },
    outdir: o.outdir,
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    external: optionalNatives,
    banner: cjsPrologue,
    // every import() becomes a require(), Node's built-ins' too: a script compiled from a code cache loses its
    // dynamic-import callback (Node 20), and bundle-loader.mjs runs this one from its cache
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__podscopeBundleUrl' },
    metafile: true,
    plugins: [nativeAddon(o.outdir), zodEnglishOnly()],
  });
  await rewrite(join(o.outdir, 'podscope.cjs'));
  return result.metafile;
}

/**
 * esbuild escapes what is not ASCII in strings but leaves it in regular expression literals and comments; one such
 * character makes V8 hold the whole 2.5 MB source as two bytes a character and decode it as UTF-8 on every run.
 * Escaped (`\uXXXX` means the same in a regular expression, with or without the u flag), the source is read as
 * Latin-1, a plain copy (bundle-loader.mjs). An escape of such a character (`\µ`) becomes the `\uXXXX` alone.
 * The same pass makes the LAZY_BUILTINS lazy (lazyBuiltins).
 */
async function rewrite(file) {
  const text = await readFile(file, 'utf8');
  const rewritten = lazyBuiltins(escapeNonAscii(text));
  if (rewritten !== text) await writeFile(file, rewritten);
}

/** @param {string} text JavaScript whose strings esbuild has escaped already */
export function escapeNonAscii(text) {
  return text.replace(/\\?([^\x00-\x7f])/g, (_, c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
