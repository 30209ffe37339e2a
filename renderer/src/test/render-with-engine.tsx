/**
 * Renders a component tree against the real IPC router and the real sandbox engine over the OS touch-point fakes
 * (testkit/fakes/test-engine.ts), through a memory transport: the same path (zod validation, error
 * serialisation, event fan-out, the engine's own trace labels and checks) the app uses, without a host process.
 * The engine and its temp dir are closed when the test finishes.
 */
import { render } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { onTestFinished } from 'vitest';
import { createRouter } from '../../../electron/ipc/router';
import { createTestEngine, type TestEngineOptions } from '../../../testkit/fakes/test-engine';
import { createClient, type Transport } from '../../../shared/ipc/client';
import { createEndpointRegistry } from '../../../electron/endpoints';
import type { EndpointCapabilities } from '../../../shared/domain/endpoints';
import { ConnectionProvider } from '../lib/connection-context';
import type { LabApi } from '../../../shared/domain/lab';
import type { NodeDiscovery } from '../../../shared/domain/nodes';
import type { ContainerStreaming } from '../../../electron/engine/containers/streaming';

export interface RenderWithEngineOptions extends TestEngineOptions {
  /** what the local endpoint claims it can do (e.g. liveNetwork: false to see the "not available" path) */
  capabilities?: Partial<EndpointCapabilities>;
  /** the CNI lab the local engine serves (the test engine has none by default) */
  lab?: (dir: string) => LabApi;
  /** exec/attach/port-forward for the local endpoint instead of the engine's own (over the fake container runtime);
   * null: none at all, as an engine without streaming */
  streaming?: ContainerStreaming | null;
  /** the nodes discovery finds (default none: a unit test never reads this machine's /proc) */
  discoverNodes?: () => Promise<NodeDiscovery>;
}

export async function renderWithEngine(ui: React.ReactElement, opts: RenderWithEngineOptions = {}) {
  const fakes = await createTestEngine(opts);
  onTestFinished(() => fakes.close());
  const { engine } = fakes;
  if (opts.lab) Object.assign(engine, { lab: opts.lab(engine.options.stateDir) });
  const local = createEndpointRegistry({
    local: engine,
    ...(opts.streaming !== undefined && { localStreaming: () => opts.streaming ?? undefined }),
    discoverNodes: opts.discoverNodes ?? (async () => ({ nodes: [], refused: [] })),
  });
  const endpoints = opts.capabilities
    ? { ...local, list: async () => (await local.list()).map((e) => ({ ...e, capabilities: { ...e.capabilities, ...opts.capabilities } })) }
    : local;
  // a short log poll: follow tests wait for a line, not for a timer
  const router = createRouter({ engine, endpoints, isTrustedSender: () => true, logPollMs: 20 });
  onTestFinished(() => router.dispose());
  const calls: string[] = [];
  const transport: Transport = {
    kind: 'memory',
    invoke: (channel, payload) => {
      calls.push(channel);
      return router.handle(channel, payload, { transport: 'memory', url: 'test://' });
    },
    onEvent: (l) => router.subscribe(l),
  };
  const client = createClient(transport);
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const result = render(
    <ConnectionProvider value={{ client, environment: { chromiumSandbox: true, runningAsRoot: false, mode: 'browser' } }}>
      <QueryClientProvider client={queryClient}>{ui}</QueryClientProvider>
    </ConnectionProvider>,
  );
  return { ...result, engine, fakes, calls, client, queryClient, router };
}
