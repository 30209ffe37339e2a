/**
 * Browser mode as a whole: the app core (engine or its stand-in, endpoints, router) behind the 127.0.0.1 host.
 * Used by `npm start` where no Electron window can open and by `podscope serve`.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAppCore } from '../core/app-core';
import type { EngineOptions } from '../engine/options';
import { startBrowserHost } from './browser-host';

export interface BrowserMode {
  url: string;
  /** why the engine could not start, when it could not */
  engineError?: string;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The renderer is served from dist/renderer; build it once (from a source checkout) when it is missing. */
async function ensureRendererBuilt(): Promise<void> {
  if (existsSync(`${ROOT}dist/renderer/index.html`)) return;
  const { build } = await import('vite');
  await build({ configFile: `${ROOT}renderer/vite.config.ts`, logLevel: 'warn' });
}

export async function startBrowserMode(opts: { engineOptions: Partial<EngineOptions>; port?: number }): Promise<BrowserMode> {
  await ensureRendererBuilt();
  const core = await createAppCore({ engineOptions: opts.engineOptions });
  const host = await startBrowserHost({ core, port: opts.port }).catch(async (e: unknown) => {
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
