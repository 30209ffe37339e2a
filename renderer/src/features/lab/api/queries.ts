import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

export const labKeys = {
  all: (endpointId: string) => ['lab', endpointId] as const,
  runs: (endpointId: string) => ['lab', endpointId, 'runs'] as const,
  run: (endpointId: string, id: string) => ['lab', endpointId, 'run', id] as const,
  diff: (endpointId: string, a: string, b: string) => ['lab', endpointId, 'diff', a, b] as const,
  validate: (endpointId: string, text: string) => ['lab', endpointId, 'validate', text] as const,
};

export const labRunsQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: labKeys.runs(endpointId), queryFn: () => client.call('lab.list', { endpointId }) });

export const labRunQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({ queryKey: labKeys.run(endpointId, id), queryFn: () => client.call('lab.get', { endpointId, id }), staleTime: Infinity });

export const labDiffQuery = (client: PodscopeClient, endpointId: string, a: string, b: string) =>
  queryOptions({
    queryKey: labKeys.diff(endpointId, a, b),
    queryFn: () => client.call('lab.diff', { endpointId, a, b }),
    staleTime: Infinity,
  });

export const labValidateQuery = (client: PodscopeClient, endpointId: string, text: string) =>
  queryOptions({
    queryKey: labKeys.validate(endpointId, text),
    queryFn: () => client.call('lab.validate', { endpointId, text }),
    staleTime: 30_000,
  });
