/** Node discovery on this machine: the real /proc source and the CRI client's Version check. */
import type { NodeDiscovery } from '../../../shared/domain/nodes';
import { createCriEndpointApi } from '../../cri/client/cri-endpoint-api';
import { discoverNodes, type RuntimeVersion } from './discover';
import { hostProcSource } from './proc-source';

export { discoverNodes, nsPidOf, WELL_KNOWN_SOCKETS, type DiscoveryDeps, type RuntimeVersion } from './discover';
export { hostProcSource, parseNetUnix, type ProcSource } from './proc-source';
export { hostPidOf, nsPidsOf } from './pids';
export { nodeOfSocket, openNode, placeOf, type OpenedNode, type OpenNodeOptions } from './open';

/** CRI Version of one socket, on a connection opened and closed for it */
export async function criVersion(endpoint: string, timeoutMs = 2000): Promise<RuntimeVersion> {
  const api = createCriEndpointApi(endpoint, { connectTimeoutMs: timeoutMs, callTimeoutMs: timeoutMs });
  try {
    const v = await api.connect();
    return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, runtimeApiVersion: v.runtimeApiVersion };
  } finally {
    api.close();
  }
}

export function discoverHostNodes(): Promise<NodeDiscovery> {
  return discoverNodes({ proc: hostProcSource(), version: (e) => criVersion(e) });
}
