#!/usr/bin/env node
/**
 * Bundles the Electron main process (ESM, engine included) and the preload (CommonJS: sandboxed preloads cannot
 * load ES modules or require anything but a few Electron modules, so it must be one self-contained file) into
 * dist/electron. The renderer is built separately by Vite into dist/renderer.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const common = { bundle: true, platform: 'node', target: 'node22', sourcemap: true, logLevel: 'info', absWorkingDir: root };

await build({
  ...common,
  entryPoints: ['electron/main/main.ts'],
  outfile: 'dist/electron/main.js',
  format: 'esm',
  // electron is provided by the runtime; ws's optional native helpers are not needed in main
  external: ['electron', 'bufferutil', 'utf-8-validate'],
  // bundled CommonJS dependencies (grpc-js, ws) call require(); give ESM output a real one
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});

await build({
  ...common,
  entryPoints: ['electron/preload/preload.ts'],
  outfile: 'dist/electron/preload.cjs',
  format: 'cjs',
  platform: 'browser',
  external: ['electron'],
});
