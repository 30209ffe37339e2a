import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export const engineInfoQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: queryKeys.engineInfo(endpointId), queryFn: () => client.call('sandbox.info', { endpointId }) });

export const runtimeConditionsQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({
    queryKey: queryKeys.runtimeConditions(endpointId),
    queryFn: () => client.call('sandbox.runtimeConditions', { endpointId }),
  });
