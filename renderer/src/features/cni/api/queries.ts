import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

export const cniKey = (endpointId: string) => ['ep', endpointId, 'cni'] as const;

export const cniConfigQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: cniKey(endpointId), queryFn: () => client.call('sandbox.cniConfig', { endpointId }) });
