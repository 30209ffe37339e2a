import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../../shared/ipc/client';
import { podKeys } from '../../api/queries';

export const podStatusQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: podKeys.detail(endpointId, id),
    queryFn: () => client.call('sandbox.status', { endpointId, id }),
  });

/**
 * Deliberately not under podKeys.detail: progress events invalidate the status many times during a run or stop,
 * and each live read runs ip/tc/iptables on the host. The live view is refetched on `sandbox.changed` for its id
 * (use-engine-events), after a pod action, or when the user presses Refresh — never on a timer.
 */
export const liveKey = (endpointId: string, id: string) => ['ep', endpointId, 'live', id] as const;

export const podLiveQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: liveKey(endpointId, id),
    queryFn: () => client.call('sandbox.live', { endpointId, id }),
    refetchInterval: false,
  });
