/** Which IP became the pod IP and why, what every preference would have chosen, and the CNI-built network. */
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { EmptyState } from '../../../../lib/ui/EmptyState';
import { LiveNetwork } from './LiveNetwork';
import { Interfaces, IpCards, IpSelection } from './NetworkParts';
import { PluginEffects } from './PluginEffects';
import { RoutesAndDns } from './RoutesAndDns';
import { TopologyView } from './TopologyView';

export function NetworkTab({ s }: { s: SandboxStatus }) {
  if (s.hostNetwork) {
    return (
      <div className="stack">
        <EmptyState title="Host network">
          This sandbox shares the host's network namespace (namespace_options.network = NODE). No CNI plugin ran, so there is no pod IP, no
          port mapping and no bandwidth shaping.
        </EmptyState>
        <LiveNetwork s={s} />
      </div>
    );
  }
  return (
    <div className="stack">
      <IpCards s={s} />
      {s.netnsClosed && s.networks.length > 0 && (
        <div className="small muted" data-testid="cni-result-released">
          Below is the last CNI result, kept for inspection: the addresses were released by CNI DEL when the sandbox stopped
          {s.stoppedAt ? ` (${new Date(s.stoppedAt).toLocaleTimeString()})` : ''}, and the namespace is gone.
        </div>
      )}
      <IpSelection s={s} />
      <Interfaces s={s} />
      <TopologyView s={s} />
      <LiveNetwork s={s} />
      <PluginEffects s={s} />
      <RoutesAndDns s={s} />
    </div>
  );
}
