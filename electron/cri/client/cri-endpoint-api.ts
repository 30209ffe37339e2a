/**
 * SandboxApi over any CRI runtime.v1 endpoint (containerd, CRI-O, a Podscope daemon). What CRI cannot carry is
 * refused with Unimplemented rather than approximated: config previews, a per-request IP preference, and engine
 * info from runtimes other than Podscope.
 *
 * One part per service over one shared connection (endpoint-link.ts): pod sandboxes (cri-sandboxes.ts), containers
 * (cri-containers.ts), runtime status and probes (cri-runtime.ts), events (cri-events.ts) and streaming
 * (cri-streaming.ts). The client is a plain object, so callers may spread it and replace a method.
 */
import type { CriConnectionOptions } from './connection';
import { normalizeAddress } from '../address';
import { containerVerbs } from './cri-containers';
import { eventFeeds } from './cri-events';
import { runtimeReads } from './cri-runtime';
import { sandboxVerbs } from './cri-sandboxes';
import { criStreaming } from './cri-streaming';
import type { CriEndpointApi } from './endpoint-api-types';
import { createEndpointLink, isPodscopeConn } from './endpoint-link';

export type { CriEndpointApi } from './endpoint-api-types';
export { LIST_STATUS_CONCURRENCY } from './endpoint-link';

/**
 * Synchronous so callers (CLI, registry) can hold it at once; the connection and the Version check happen on
 * first use (or on connect()), and an unreachable or non-CRI socket rejects that call with Unavailable naming it.
 */
export function createCriEndpointApi(address: string, opts: CriConnectionOptions = {}): CriEndpointApi {
  const link = createEndpointLink(normalizeAddress(address), opts);
  return {
    address: link.address,
    socketPath: link.socketPath,
    streaming: criStreaming(link.connected),
    async connect() {
      return (await link.connected()).version;
    },
    async isPodscope() {
      return isPodscopeConn(await link.connected());
    },
    ...sandboxVerbs(link),
    ...containerVerbs(link),
    ...runtimeReads(link),
    ...eventFeeds(link),
    close: () => link.close(),
  };
}
