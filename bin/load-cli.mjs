// Finds the podscope CLI. In a checkout with dev dependencies, the checkout's own build of its sources runs (built
// on first use and again whenever a source it was built from changed, see cli-cache.mjs), so there is no build step
// to forget and no stale code; in a production install (no tsx) or the packaged app, the esbuild bundle in dist/cli
// runs, which needs neither tsx nor Vite nor any test code. Either bundle runs from its code cache (bundle-loader.mjs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadBundle } from './bundle-loader.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** a look at the file, not require.resolve (which costs a few ms of every verb) */
function hasTsx() {
  return existsSync(`${root}node_modules/tsx/package.json`);
}

/**
 * `source`: a checkout, whose sources run (from the checkout's build of them, or through tsx);
 * `bundle`: dist/cli/podscope.cjs. PODSCOPE_CLI=bundle runs dist/cli in a checkout too (`npm run build:electron`
 * first); PODSCOPE_CLI=source runs the TypeScript through tsx, skipping the checkout's build.
 */
export const cliMode = process.env.PODSCOPE_CLI !== 'bundle' && existsSync(`${root}electron/cli/main.ts`) && hasTsx() ? 'source' : 'bundle';

/** In a checkout the UI is built on first use (Vite is a dev dependency); a production install ships it built. */
export async function ensureRendererBuilt() {
  if (cliMode !== 'source' || existsSync(`${root}dist/renderer/index.html`)) return;
  const { build } = await import('vite');
  await build({ configFile: `${root}renderer/vite.config.ts`, logLevel: 'warn' });
}

/** @returns {Promise<(argv: string[]) => Promise<number>>} */
export async function loadCliMain() {
  if (cliMode === 'source') {
    const built = process.env.PODSCOPE_CLI === 'source' ? undefined : await checkoutBuild();
    if (built) {
      // the build lives under node_modules/.cache, so the renderer is not where a bundled browser host looks for it
      // (two levels above itself, as in dist/cli): it is the checkout's dist/renderer
      process.env.PODSCOPE_RENDERER_DIR ??= `${root}dist/renderer`;
      return mainOf(built);
    }
    const { register } = await import('tsx/esm/api');
    register();
    return (await import('../electron/cli/main.ts')).main;
  }
  const bundle = `${root}dist/cli/podscope.cjs`;
  if (!existsSync(bundle)) {
    process.stderr.write(`podscope: ${bundle} is missing and tsx is not installed: run \`npm run build\` (or install dev dependencies)\n`);
    process.exit(1);
  }
  return mainOf(bundle);
}

/**
 * The bundle's main, which after a run hands what it compiled to the code cache (when the cache lacked it).
 * @param {string} bundle
 * @returns {(argv: string[]) => Promise<number>}
 */
function mainOf(bundle) {
  const loaded = loadBundle(bundle);
  const { main, verbOf } = loaded.exports;
  return async (argv) => {
    const code = await main(argv);
    loaded.keep(verbOf(argv));
    return code;
  };
}

/**
 * The checkout's build, current with its sources (rebuilt here when not); undefined when it cannot be built (no
 * esbuild, a read-only checkout, a syntax error): tsx then runs the sources and reports what is wrong with them.
 */
async function checkoutBuild() {
  const cacheDir = `${root}node_modules/.cache/podscope-cli`;
  const { freshBuild, rebuild } = await import('./cli-cache.mjs');
  const fresh = freshBuild(root, cacheDir);
  if (fresh) return fresh;
  try {
    const { buildCli } = await import('../scripts/build-cli.mjs');
    return await rebuild(root, cacheDir, (outdir) => buildCli({ outdir, logLevel: 'silent' }), CLI_BUILD_SHAPERS);
  } catch (e) {
    // said every time: a checkout that cannot keep its build runs about ten times slower, and should know why
    process.stderr.write(
      `podscope: the CLI could not be built (${e instanceof Error ? e.message.split('\n')[0] : e}); running its sources through tsx\n`,
    );
    return undefined;
  }
}

/** Files that shape the CLI's build without being bundled into it. */
const CLI_BUILD_SHAPERS = ['scripts/build-cli.mjs', 'package.json'];
