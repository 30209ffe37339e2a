/**
 * The endpoint every screen works against (the built-in engine or an added CRI runtime) and what it can do.
 * Shared by every feature, so it lives below them; adding and removing endpoints is the endpoints feature's.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { create } from 'zustand';
import { LOCAL_ENDPOINT_CAPABILITIES, LOCAL_ENDPOINT_ID, type EndpointCapabilities, type EndpointView } from '../../../shared/domain/endpoints';
import type { PodscopeClient } from '../../../shared/ipc/client';
import { useClient } from './connection-context';
import { useNavigation } from './navigation';

interface EndpointSelection {
  endpointId: string;
  setEndpoint(id: string): void;
}

/** Switching endpoints also closes the open pod, which belongs to the previous endpoint. */
export const useEndpointSelection = create<EndpointSelection>((set) => ({
  endpointId: LOCAL_ENDPOINT_ID,
  setEndpoint: (endpointId) => {
    set({ endpointId });
    useNavigation.getState().select(undefined);
  },
}));

export const useEndpointId = (): string => useEndpointSelection((s) => s.endpointId);

export const endpointsKey = ['endpoints'] as const;

export const endpointsQuery = (client: PodscopeClient) =>
  queryOptions({ queryKey: endpointsKey, queryFn: () => client.call('endpoints.list', {}) });

export function useCurrentEndpoint(): EndpointView | undefined {
  const client = useClient();
  const endpointId = useEndpointId();
  const { data } = useQuery(endpointsQuery(client));
  return data?.find((e) => e.id === endpointId);
}

export function useEndpointCapabilities(): EndpointCapabilities {
  return useCurrentEndpoint()?.capabilities ?? LOCAL_ENDPOINT_CAPABILITIES;
}
