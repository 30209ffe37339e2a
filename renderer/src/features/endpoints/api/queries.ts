import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export function useEndpointMutations(client: PodscopeClient) {
  const qc = useQueryClient();
  const add = useMutation({
    mutationFn: (req: { address: string; label?: string; cniResultsDir?: string }) => client.call('endpoints.add', req),
    onSuccess: () => qc.invalidateQueries({ queryKey: queryKeys.endpoints }),
  });
  const remove = useMutation({
    mutationFn: (id: string) => client.call('endpoints.remove', { id }),
    onSuccess: () => qc.invalidateQueries({ queryKey: queryKeys.endpoints }),
  });
  const rename = useMutation({
    mutationFn: (req: { id: string; label: string }) => client.call('endpoints.rename', req),
    onSuccess: () => qc.invalidateQueries({ queryKey: queryKeys.endpoints }),
  });
  return { add, remove, rename };
}

/** the nodes on this machine, read when asked for (discovery reads /proc and asks every runtime's socket) */
export function useDiscoveredNodes(client: PodscopeClient, enabled: boolean) {
  return useQuery({ queryKey: queryKeys.nodes, queryFn: () => client.call('nodes.discover', {}), enabled, staleTime: 0 });
}
