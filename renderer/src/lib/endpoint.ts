/**
 * The endpoint every screen works against (the built-in engine or an added CRI runtime) and what it can do.
 * Shared by every feature, so it lives below them; adding and removing endpoints is the endpoints feature's.
 */
import { useEffect } from 'react';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { createUiStore } from './ui-store';
import {
  LOCAL_ENDPOINT_CAPABILITIES,
  LOCAL_ENDPOINT_ID,
  type EndpointCapabilities,
  type EndpointView,
} from '../../../shared/domain/endpoints';
import type { PodscopeClient } from '../../../shared/ipc/client';
import { useClient } from './connection-context';
import { useNavigation } from './navigation';
import { queryKeys } from './query-keys';

interface EndpointSelection {
  endpointId: string;
  setEndpoint(id: string): void;
}

/** Switching endpoints also closes the open pod, which belongs to the previous endpoint. */
export const useEndpointSelection = createUiStore<EndpointSelection>((set) => ({
  endpointId: LOCAL_ENDPOINT_ID,
  setEndpoint: (endpointId) => {
    set({ endpointId });
    useNavigation.getState().select(undefined);
  },
}));

export const useEndpointId = (): string => useEndpointSelection((s) => s.endpointId);

export const endpointsQuery = (client: PodscopeClient) =>
  queryOptions({ queryKey: queryKeys.endpoints, queryFn: () => client.call('endpoints.list', {}) });

/**
 * While a CRI endpoint is selected its state is re-read every second (each read pings it with a short deadline), on
 * top of the endpoints.changed push, so a daemon that died shows as lost within about two seconds everywhere.
 */
export const ENDPOINT_POLL_MS = 1000;

export function useCurrentEndpoint(): EndpointView | undefined {
  const client = useClient();
  const endpointId = useEndpointId();
  const { data } = useQuery(endpointsQuery(client));
  return data?.find((e) => e.id === endpointId);
}

/**
 * The one observer that polls (the always-mounted endpoint switcher): every other reader shares its cache entry.
 * When the selected endpoint is no longer in the list (removed here, in another window or by the CLI) the screens
 * go back to the local engine instead of showing that endpoint's last error forever.
 */
export function useEndpointsPolled() {
  const client = useClient();
  const endpointId = useEndpointId();
  const q = useQuery({ ...endpointsQuery(client), refetchInterval: endpointId === LOCAL_ENDPOINT_ID ? false : ENDPOINT_POLL_MS });
  const gone = q.data !== undefined && endpointId !== LOCAL_ENDPOINT_ID && !q.data.some((e) => e.id === endpointId);
  useEffect(() => {
    if (gone) useEndpointSelection.getState().setEndpoint(LOCAL_ENDPOINT_ID);
  }, [gone]);
  return q;
}

export function useEndpointCapabilities(): EndpointCapabilities {
  return useCurrentEndpoint()?.capabilities ?? LOCAL_ENDPOINT_CAPABILITIES;
}
