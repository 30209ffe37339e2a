import { useQuery } from '@tanstack/react-query';
import { LOCAL_ENDPOINT_CAPABILITIES, type EndpointCapabilities, type EndpointView } from '../../../../../shared/domain/endpoints';
import { useClient } from '../../../lib/connection-context';
import { useUi } from '../../../app/ui-store';
import { endpointsQuery } from '../api/queries';

const LOCAL_CAPS: EndpointCapabilities = LOCAL_ENDPOINT_CAPABILITIES;

export function useCurrentEndpoint(): EndpointView | undefined {
  const client = useClient();
  const endpointId = useUi((s) => s.endpointId);
  const { data } = useQuery(endpointsQuery(client));
  return data?.find((e) => e.id === endpointId);
}

export function useEndpointCapabilities(): EndpointCapabilities {
  return useCurrentEndpoint()?.capabilities ?? LOCAL_CAPS;
}
