/** Pods list and the actions on pods, all addressed to one endpoint. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

export const podKeys = {
  all: (endpointId: string) => ['ep', endpointId, 'pods'] as const,
  detail: (endpointId: string, id: string) => ['ep', endpointId, 'pod', id] as const,
};

export const podsQuery = (client: PodscopeClient, endpointId: string, poll: boolean) =>
  queryOptions({
    queryKey: podKeys.all(endpointId),
    queryFn: () => client.call('sandbox.list', { endpointId }),
    // endpoints without events (CRI) are polled; the local engine pushes changes
    refetchInterval: poll ? 3000 : false,
  });

export function usePodActions(client: PodscopeClient, endpointId: string) {
  const qc = useQueryClient();
  const settle = () => qc.invalidateQueries({ queryKey: ['ep', endpointId] });
  const stop = useMutation({
    mutationFn: async (ids: string[]) => {
      for (const id of ids) await client.call('sandbox.stop', { endpointId, id });
    },
    onSettled: settle,
  });
  const remove = useMutation({
    mutationFn: async (ids: string[]) => {
      for (const id of ids) await client.call('sandbox.remove', { endpointId, id });
    },
    onSettled: settle,
  });
  return { stop, remove };
}
