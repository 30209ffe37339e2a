/**
 * The one composition root: the engine (or, when it cannot start, a stand-in that explains why so the UI still
 * opens), the endpoint registry (built-in engine + CRI endpoints the user adds) and the router every front door
 * uses. The Electron main, browser mode (`npm start` without a window) and `podscope serve` all start here, so
 * what they host cannot drift apart.
 */
import { createEndpointRegistry, type CriEndpointRegistry } from '../endpoints';
import { createEngine, createUnavailableEngine, type Engine, type EngineOptions } from '../engine/api';
import { createRouter, type Router } from '../ipc/router';
import type { SenderPolicy } from '../ipc/sender';

export interface AppCore {
  engine: Engine;
  endpoints: CriEndpointRegistry;
  /** why the engine could not start, when it could not (the UI explains it; every call answers Unavailable) */
  engineError?: string;
  /** a router over this core for one front door; `isTrustedSender` is that door's policy */
  createRouter(isTrustedSender: SenderPolicy): Router;
  /** closes the routers, the CRI connections and the engine (sandboxes keep running, like containerd's) */
  close(): Promise<void>;
}

export interface AppCoreOptions {
  engineOptions?: Partial<EngineOptions>;
}

export async function createAppCore(options: AppCoreOptions = {}): Promise<AppCore> {
  const engineOptions = options.engineOptions ?? {};
  try {
    return assembleAppCore(await createEngine(engineOptions));
  } catch (e) {
    return assembleAppCore(createUnavailableEngine(e, engineOptions), { engineError: (e as Error).message });
  }
}

/** Builds the core around an engine made elsewhere (tests build the real engine over touch-point fakes). */
export function assembleAppCore(engine: Engine, extras: { engineError?: string } = {}): AppCore {
  const endpoints = createEndpointRegistry({ local: engine });
  const routers = new Set<Router>();
  return {
    engine,
    endpoints,
    engineError: extras.engineError,
    createRouter(isTrustedSender) {
      const router = createRouter({ engine, endpoints, isTrustedSender });
      routers.add(router);
      return router;
    },
    async close() {
      for (const r of routers) r.dispose();
      routers.clear();
      endpoints.close();
      await engine.close();
    },
  };
}
