import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../../shared/ipc/client';
import { queryKeys } from '../../../../lib/query-keys';

export const podStatusQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: queryKeys.pod(endpointId, id),
    queryFn: () => client.call('sandbox.status', { endpointId, id }),
  });

/**
 * The live view is refetched on `sandbox.changed` for its id (app/engine-events), after a pod action, or when the
 * user presses Refresh — never on a timer.
 */
export const podLiveQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: queryKeys.podLive(endpointId, id),
    queryFn: () => client.call('sandbox.live', { endpointId, id }),
    refetchInterval: false,
  });
