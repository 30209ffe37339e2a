/**
 * One CNI network as the kernel has it now: every ready pod on it, its veth, the bridge, the host. Read on demand
 * (each read runs ip/bridge on the host and in every pod's netns). A pod's node opens that pod's Network tab.
 */
import { useMutation } from '@tanstack/react-query';
import type { NetworkTopology as Topology } from '../../../../../shared/domain/topology';
import { useClient } from '../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { useNavigation } from '../../../lib/navigation';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { TopologyDiagram } from '../../../lib/ui/TopologyDiagram';

export function NetworkTopology({ network }: { network: string }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const openPod = useNavigation((s) => s.openPod);
  const m = useMutation({ mutationFn: (): Promise<Topology> => client.call('network.topology', { endpointId, network }) });
  if (!caps.liveNetwork) return null;
  const t = m.data;
  return (
    <div className="stack-s" data-testid={`network-topology-${network}`}>
      <div className="toolbar">
        <button type="button" className="btn btn-small" onClick={() => m.mutate()} disabled={m.isPending}>
          {m.isPending ? 'Reading…' : t ? 'Read again' : 'Draw from the kernel'}
        </button>
        {t && (
          <span className="small muted">
            read from the kernel at <b className="mono">{new Date(t.readAt).toLocaleTimeString(undefined, { hour12: false })}</b> ·{' '}
            {t.sandboxes.length} ready pod{t.sandboxes.length === 1 ? '' : 's'}
          </span>
        )}
      </div>
      {m.isError && <ErrorView error={m.error} title="Could not read the topology" />}
      {t && t.errors.length > 0 && <div className="callout callout-warn small">{t.errors.join('; ')}</div>}
      {t &&
        (t.sandboxes.length === 0 ? (
          <div className="muted small">No ready pod on this network: nothing is wired to draw.</div>
        ) : (
          <div className="topo-scroll">
            <TopologyDiagram
              nodes={t.nodes}
              edges={t.edges}
              label={`topology of network ${network}`}
              onOpen={(n) => n.sandboxId && openPod(n.sandboxId, 'network')}
            />
          </div>
        ))}
    </div>
  );
}
