/**
 * Browser mode as a whole: the app core (engine or its stand-in, endpoints, router) behind the 127.0.0.1 host.
 * Used by `npm start` where no Electron window can open and by `podscope serve`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PodscopeError } from '../../shared/domain/errors';
import { createAppCore } from '../core/app-core';
import type { EngineOptions } from '../engine/api';
import { DEFAULT_RENDERER_DIR, startBrowserHost } from './browser-host';

export interface BrowserMode {
  url: string;
  /** why the engine could not start, when it could not */
  engineError?: string;
  close(): Promise<void>;
}

/**
 * The built renderer must be there: the product never builds it (that needs Vite, a development tool). From a
 * checkout, bin/podscope.mjs and `npm start` build it first; a production install ships it.
 */
function checkRendererBuilt(dir: string): void {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new PodscopeError('FailedPrecondition', `the UI is not built: ${dir}/index.html is missing (run \`npm run build\`)`);
  }
}

export async function startBrowserMode(opts: {
  engineOptions: Partial<EngineOptions>;
  port?: number;
  rendererDir?: string;
}): Promise<BrowserMode> {
  const rendererDir = opts.rendererDir ?? DEFAULT_RENDERER_DIR;
  checkRendererBuilt(rendererDir);
  const core = await createAppCore({ engineOptions: opts.engineOptions });
  const host = await startBrowserHost({ core, port: opts.port, rendererDir }).catch(async (e: unknown) => {
    await core.close();
    throw e;
  });
  return {
    url: host.url,
    engineError: core.engineError,
    async close() {
      await host.close();
      await core.close();
    },
  };
}

export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
