/** The containers of an endpoint's pods: one list query per endpoint, counted per pod for the table. */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { ContainerSummary } from '../../../../../shared/domain/container';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export const containersQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({
    queryKey: queryKeys.containers(endpointId),
    queryFn: () => client.call('containers.list', { endpointId }),
    // never polled: container events invalidate this for the local engine, pushed deltas patch it for CRI endpoints
    refetchInterval: false,
  });

/** pod id ⇒ its containers (newest first, as the engine lists them) */
export function useContainersByPod(client: PodscopeClient, endpointId: string): Map<string, ContainerSummary[]> {
  const q = useQuery(containersQuery(client, endpointId));
  return useMemo(() => {
    const m = new Map<string, ContainerSummary[]>();
    for (const c of q.data ?? []) m.set(c.podSandboxId, [...(m.get(c.podSandboxId) ?? []), c]);
    return m;
  }, [q.data]);
}
