/**
 * What the CNI page shows and may do: the engine's loaded configuration (read only where the endpoint offers it) and
 * whether its networks can be opened in the lab.
 */
import { useQuery } from '@tanstack/react-query';
import type { CniNetworkView } from '../../../../../shared/domain/cni';
import { LOCAL_ENDPOINT_ID } from '../../../../../shared/domain/endpoints';
import { useClient } from '../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { useNavigation } from '../../../lib/navigation';
import { cniConfigQuery } from '../api/queries';

/** The network as a conflist text again (what the lab edits): the plugins exactly as written in the file. */
export function conflistText(n: CniNetworkView): string {
  return JSON.stringify(
    { cniVersion: n.cniVersion, name: n.name, ...(n.disableCheck ? { disableCheck: true } : {}), plugins: n.plugins.map((p) => p.raw) },
    null,
    2,
  );
}

export function useCniConfig() {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const q = useQuery({ ...cniConfigQuery(client, endpointId), enabled: caps.cniConfig });
  const openInLab = useNavigation((s) => s.openInLab);
  // the lab runs plugins on this host: only the local engine has one
  const labAvailable = endpointId === LOCAL_ENDPOINT_ID;
  return { available: caps.cniConfig, q, labAvailable, openInLab };
}
