import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export const labRunsQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: queryKeys.labRuns(endpointId), queryFn: () => client.call('lab.list', { endpointId }) });

export const labRunQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: queryKeys.labRun(endpointId, id),
    queryFn: () => client.call('lab.get', { endpointId, id }),
    staleTime: Infinity,
  });

export const labDiffQuery = (client: PodscopeClient, endpointId: string, a: string, b: string) =>
  queryOptions({
    queryKey: queryKeys.labDiff(endpointId, a, b),
    queryFn: () => client.call('lab.diff', { endpointId, a, b }),
    staleTime: Infinity,
  });

export const labValidateQuery = (client: PodscopeClient, endpointId: string, text: string) =>
  queryOptions({
    queryKey: queryKeys.labValidate(endpointId, text),
    queryFn: () => client.call('lab.validate', { endpointId, text }),
    staleTime: 30_000,
  });
