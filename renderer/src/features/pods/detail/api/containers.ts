/** Container status and actions of the pod detail's Containers tab; keys sit under the containers list key so a container event refreshes both. */
import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../../shared/ipc/client';
import { queryKeys } from '../../../../lib/query-keys';

export const containerStatusQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: queryKeys.containerStatus(endpointId, id),
    queryFn: () => client.call('containers.status', { endpointId, id }),
  });

export const podContainersQuery = (client: PodscopeClient, endpointId: string, podId: string, poll: boolean) =>
  queryOptions({
    queryKey: queryKeys.podContainers(endpointId, podId),
    queryFn: () => client.call('containers.list', { endpointId, filter: { podSandboxId: podId } }),
    refetchInterval: poll ? 3000 : false,
  });

/** CRI timestamps are nanoseconds since the epoch as decimal strings; "0" means never. */
export function nsToIso(ns: string | undefined): string | undefined {
  if (!ns || ns === '0') return undefined;
  const ms = Number(BigInt(ns) / 1_000_000n);
  return new Date(ms).toISOString();
}
