// Finds the podscope CLI. In a checkout with dev dependencies, the TypeScript sources run through tsx, so there is
// no build step to forget; in a production install (no tsx) or the packaged app, the esbuild bundle in dist/cli
// runs, which needs neither tsx nor Vite nor any test code.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function hasTsx() {
  try {
    createRequire(import.meta.url).resolve('tsx/esm/api');
    return true;
  } catch {
    return false;
  }
}

/**
 * `source`: TypeScript through tsx; `bundle`: dist/cli/podscope.mjs. PODSCOPE_CLI=bundle runs the bundle in a
 * checkout too (`npm run build:electron` first): the benches measure what ships, since tsx's loader roughly doubles
 * the process's memory, and every fork of a plugin or runc copies it.
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
    const { register } = await import('tsx/esm/api');
    register();
    return (await import('../electron/cli/main.ts')).main;
  }
  const bundle = `${root}dist/cli/podscope.mjs`;
  if (!existsSync(bundle)) {
    process.stderr.write(`podscope: ${bundle} is missing and tsx is not installed: run \`npm run build\` (or install dev dependencies)\n`);
    process.exit(1);
  }
  return (await import(bundle)).main;
}
