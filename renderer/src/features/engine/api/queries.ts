import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

export const engineInfoQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: ['ep', endpointId, 'info'], queryFn: () => client.call('sandbox.info', { endpointId }) });

export const runtimeConditionsQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: ['ep', endpointId, 'conditions'], queryFn: () => client.call('sandbox.runtimeConditions', { endpointId }) });
