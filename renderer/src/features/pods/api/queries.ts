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

/** `nodeOf`: the node of each pod when the list holds several nodes' pods (else every pod is `endpointId`'s) */
export function usePodActions(client: PodscopeClient, endpointId: string, nodeOf?: Map<string, string>) {
  const qc = useQueryClient();
  const on = (id: string) => nodeOf?.get(id) ?? endpointId;
  const settle = (_: unknown, __: unknown, ids: string[]) =>
    Promise.all([...new Set([endpointId, ...ids.map(on)])].map((ep) => qc.invalidateQueries({ queryKey: queryKeys.endpoint(ep) })));
  const stop = useMutation({
    mutationFn: async (ids: string[]) => {
      for (const id of ids) await client.call('sandbox.stop', { endpointId: on(id), id });
    },
    onSettled: settle,
  });
  const remove = useMutation({
    mutationFn: async (ids: string[]) => {
      for (const id of ids) await client.call('sandbox.remove', { endpointId: on(id), id });
    },
    onSettled: settle,
  });
  return { stop, remove };
}
