/** Pods list and the actions on pods, all addressed to one endpoint. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

/** the pods feature's names for its keys in lib/query-keys */
export const podKeys = { all: queryKeys.pods, detail: queryKeys.pod };

/**
 * Never polled: the local engine pushes every change, and the main process follows each CRI endpoint (events or
 * one re-list every few seconds) and pushes the rows that changed (app/engine-events.ts applies both).
 */
export const podsQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({
    queryKey: podKeys.all(endpointId),
    queryFn: () => client.call('sandbox.list', { endpointId }),
    refetchInterval: false,
  });

export function usePodActions(client: PodscopeClient, endpointId: string) {
  const qc = useQueryClient();
  const settle = () => qc.invalidateQueries({ queryKey: queryKeys.endpoint(endpointId) });
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
