/**
 * The esbuild options of the CLI bundle, shared by `npm run build` (scripts/build-electron.mjs → dist/cli) and the
 * checkout's own cached build (bin/cli-cache.mjs → node_modules/.cache/podscope-cli), so both run the same code.
 *
 * The CLI is split into chunks (esbuild `splitting`): a verb loads only what it imports, since each command and the
 * heavy parts behind it (the engine, gRPC, protobuf, yaml, the image store) are reached through `import()`. One
 * 4 MB file had to be read and parsed whole by every verb (about 130 ms of a `pods` here).
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** bundled CommonJS dependencies (grpc-js, ws) call require(); give ESM output a real one */
export const esmRequire = {
  js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
};

/** ws's optional native helpers are not needed (it falls back to JavaScript) */
export const optionalNatives = ['bufferutil', 'utf-8-validate'];

/**
 * node-unix-socket (the client of conmon's SOCK_SEQPACKET attach socket) is a prebuilt N-API addon: its .node file is
 * copied next to each bundle that uses it, and its loader (which probes a package per platform through __dirname,
 * which an ES module bundle does not have) becomes one require of that file, resolved beside the bundle (chunks
 * included: they are written to the same directory).
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
 * Builds the CLI into `outdir`: `podscope.mjs` (exports `main(argv)`) and its chunks beside it.
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
    // less text for every verb to read and parse (the engine chunk 574 → ~330 kB); names are kept, so stack traces
    // and class names read as in the sources, and the source maps lead back to them (node --enable-source-maps)
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: o.logLevel ?? (o.quiet ? 'warning' : 'info'),
    absWorkingDir: root,
    entryPoints: { podscope: 'electron/cli/main.ts' },
    outdir: o.outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    format: 'esm',
    external: optionalNatives,
    banner: esmRequire,
    metafile: true,
    plugins: [nativeAddon(o.outdir), zodEnglishOnly()],
  });
  return result.metafile;
}
