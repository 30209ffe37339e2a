#!/usr/bin/env node
/**
 * Bundles what runs in production into dist/ (the renderer is built separately by Vite into dist/renderer):
 *   dist/electron/main.js    the Electron main process (ESM, engine included)
 *   dist/electron/preload.cjs the preload (CommonJS: sandboxed preloads cannot load ES modules or require anything
 *                            but a few Electron modules, so it must be one self-contained file)
 *   dist/cli/podscope.cjs    the CLI (`podscope`, `podscope serve`, `podscope cri`), with its npm dependencies inside,
 *                            so a production install runs it without tsx, Vite or test code: one script, run from a
 *                            code cache its first runs leave beside it (see build-cli.mjs, bin/bundle-loader.mjs)
 * --outdir DIR writes elsewhere (the production-install test builds into a temp dir).
 */
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { buildCli, esmRequire, nativeAddon, optionalNatives } from './build-cli.mjs';

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

// a fresh directory: no code cache of an older bundle stays beside the new one
await rm(resolve(root, out, 'cli'), { recursive: true, force: true });
await buildCli({ outdir: resolve(root, out, 'cli'), quiet: values.quiet });
