/**
 * A test's child script (an engine driver that the test SIGKILLs, crashes or restarts) bundled once into plain
 * JavaScript, so each child starts from it instead of compiling the engine's TypeScript through tsx again: about 4 s
 * against under 1 s per child on a loaded 2-core machine, and the SIGKILL loop starts some 26 of them. The bundle is
 * the same code (esbuild, as the CLI's own build), npm packages left to Node's resolution but zod (see below) — which
 * is why it is written inside the checkout (node_modules/.cache), where they resolve as they do for the sources.
 */
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** @returns the path of the bundled script (ESM), to run with `node <path> ...args` */
export async function bundleScript(entry: string): Promise<string> {
  const dir = join(ROOT, 'node_modules/.cache/podscope-test');
  await mkdir(dir, { recursive: true });
  const outfile = join(dir, `${basename(entry).replace(/\.ts$/, '')}-${process.pid}.mjs`);
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    // npm packages are left to Node's resolution, but zod: its package entry loads every module it has (its ~40
    // locales included), ~90 ms of each child's start here, where the bundle keeps only what the sources use
    plugins: [
      {
        name: 'external-but-zod',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (a) =>
            a.path === 'zod' || a.path.startsWith('zod/') ? undefined : { path: a.path, external: true },
          );
        },
      },
    ],
    sourcemap: 'inline',
    logLevel: 'warning',
    // bundled CommonJS modules of the sources call require(); an ES module has none of its own
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}
