import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { podKeys } from '../../pods/api/queries';

export const podStatusQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: podKeys.detail(endpointId, id),
    queryFn: () => client.call('sandbox.status', { endpointId, id }),
  });
