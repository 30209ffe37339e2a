import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

export const imagesKey = (endpointId: string) => ['ep', endpointId, 'images'] as const;

export const imagesQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: imagesKey(endpointId), queryFn: () => client.call('images.list', { endpointId }) });

export const imageDetailQuery = (client: PodscopeClient, endpointId: string, ref: string) =>
  queryOptions({
    queryKey: [...imagesKey(endpointId), 'inspect', ref] as const,
    queryFn: () => client.call('images.inspect', { endpointId, ref }),
  });
