#!/usr/bin/env node
/**
 * Bundles what runs in production into dist/ (the renderer is built separately by Vite into dist/renderer):
 *   dist/electron/main.js    the Electron main process (ESM, engine included)
 *   dist/electron/preload.cjs the preload (CommonJS: sandboxed preloads cannot load ES modules or require anything
 *                            but a few Electron modules, so it must be one self-contained file)
 *   dist/cli/podscope.mjs    the CLI (`podscope`, `podscope serve`, `podscope cri`), with its npm dependencies inside,
 *                            so a production install runs it without tsx, Vite or test code
 * --outdir DIR writes elsewhere (the production-install test builds into a temp dir).
 */
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { outdir: { type: 'string' }, quiet: { type: 'boolean' } } });
const out = values.outdir ?? 'dist';
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: values.quiet ? 'warning' : 'info',
  absWorkingDir: root,
};
// bundled CommonJS dependencies (grpc-js, ws) call require(); give ESM output a real one
const esmRequire = {
  js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
};
// ws's optional native helpers are not needed (it falls back to JavaScript)
const optionalNatives = ['bufferutil', 'utf-8-validate'];

/**
 * node-unix-socket (the client of conmon's SOCK_SEQPACKET attach socket) is a prebuilt N-API addon: its .node file is
 * copied next to each bundle that uses it, and its loader (which probes a package per platform through __dirname,
 * which an ES module bundle does not have) becomes one require of that file, resolved beside the bundle.
 */
function nativeAddon(bundleDir) {
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

await build({
  ...common,
  entryPoints: ['electron/main/main.ts'],
  outfile: `${out}/electron/main.js`,
  format: 'esm',
  external: ['electron', ...optionalNatives],
  banner: esmRequire,
  plugins: [nativeAddon(resolve(root, out, 'electron'))],
});

await build({
  ...common,
  entryPoints: ['electron/preload/preload.ts'],
  outfile: `${out}/electron/preload.cjs`,
  format: 'cjs',
  platform: 'browser',
  external: ['electron'],
});

await build({
  ...common,
  entryPoints: ['electron/cli/main.ts'],
  outfile: `${out}/cli/podscope.mjs`,
  format: 'esm',
  external: optionalNatives,
  banner: esmRequire,
  plugins: [nativeAddon(resolve(root, out, 'cli'))],
});
