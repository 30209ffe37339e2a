import { queryOptions } from '@tanstack/react-query';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export const imagesQuery = (client: PodscopeClient, endpointId: string) =>
  queryOptions({ queryKey: queryKeys.images(endpointId), queryFn: () => client.call('images.list', { endpointId }) });

export const imageDetailQuery = (client: PodscopeClient, endpointId: string, ref: string) =>
  queryOptions({
    queryKey: queryKeys.imageInspect(endpointId, ref),
    queryFn: () => client.call('images.inspect', { endpointId, ref }),
  });
