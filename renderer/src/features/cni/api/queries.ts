import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export const cniConfigQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: queryKeys.cniConfig(endpointId), queryFn: () => client.call('sandbox.cniConfig', { endpointId }) });
