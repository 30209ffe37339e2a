/**
 * Browser mode as a whole: the engine (or, when it cannot start, a stand-in that explains why, so the UI still
 * opens), the endpoint registry (built-in engine + CRI endpoints the user adds), and the 127.0.0.1 host.
 * Used by `npm start` where no Electron window can open and by `podscope serve`.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEndpointRegistry } from '../cri/endpoint-registry';
import { createEngine } from '../engine/index';
import type { Engine, EngineOptions } from '../engine/options';
import { createUnavailableEngine } from '../ipc/unavailable-engine';
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
  let engine: Engine;
  let engineError: string | undefined;
  try {
    engine = await createEngine(opts.engineOptions);
  } catch (e) {
    engine = createUnavailableEngine(e, opts.engineOptions);
    engineError = (e as Error).message;
  }
  const endpoints = createEndpointRegistry({ local: engine });
  const host = await startBrowserHost({ engine, endpoints, port: opts.port });
  return {
    url: host.url,
    engineError,
    async close() {
      await host.close();
      endpoints.close();
      await engine.close();
    },
  };
}

export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
