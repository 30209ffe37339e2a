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
  /** the node the screens talk to: the sidebar's choice, or the node of the pod opened from the list */
  endpointId: string;
  /** the nodes whose pods the pods list shows, each kept live (the list's Node filter); the sidebar's choice alone at first */
  listedIds: string[];
  setEndpoint(id: string): void;
  setListed(ids: string[]): void;
  /** a pod of another listed node is opened: the screens talk to its node, the list keeps every listed node */
  openOn(id: string): void;
}

/** Switching nodes in the sidebar lists that node alone and closes the open pod, which belongs to the previous one. */
export const useEndpointSelection = createUiStore<EndpointSelection>((set) => ({
  endpointId: LOCAL_ENDPOINT_ID,
  listedIds: [LOCAL_ENDPOINT_ID],
  setEndpoint: (endpointId) => {
    set({ endpointId, listedIds: [endpointId] });
    useNavigation.getState().select(undefined);
  },
  setListed: (listedIds) => set({ listedIds }),
  openOn: (endpointId) => set({ endpointId }),
}));

export const useEndpointId = (): string => useEndpointSelection((s) => s.endpointId);

/**
 * The nodes the pods list shows: the listed ones that still exist (in the endpoints list's order), else the current
 * one — a node removed here, in another window or by the CLI drops out of the list instead of erroring forever.
 */
export function listedNodeIds(endpoints: EndpointView[] | undefined, listed: string[], current: string): string[] {
  if (!endpoints) return listed.length ? listed : [current];
  const ids = endpoints.map((e) => e.id).filter((id) => listed.includes(id));
  return ids.length ? ids : [current];
}

export const endpointsQuery = (client: PodscopeClient) =>
  queryOptions({ queryKey: queryKeys.endpoints, queryFn: () => client.call('endpoints.list', {}) });

/**
 * While a CRI endpoint is selected or listed its state is re-read every second (each read pings it with a short deadline), on
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
  // a CRI node shown anywhere (selected, or listed in the pods list) is watched for a loss
  const listsCri = useEndpointSelection((s) => s.listedIds.some((id) => id !== LOCAL_ENDPOINT_ID));
  const q = useQuery({
    ...endpointsQuery(client),
    refetchInterval: endpointId === LOCAL_ENDPOINT_ID && !listsCri ? false : ENDPOINT_POLL_MS,
  });
  const gone = q.data !== undefined && endpointId !== LOCAL_ENDPOINT_ID && !q.data.some((e) => e.id === endpointId);
  useEffect(() => {
    if (gone) useEndpointSelection.getState().setEndpoint(LOCAL_ENDPOINT_ID);
  }, [gone]);
  return q;
}

export function useEndpointCapabilities(): EndpointCapabilities {
  return useCurrentEndpoint()?.capabilities ?? LOCAL_ENDPOINT_CAPABILITIES;
}
