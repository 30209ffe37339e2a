/** `ip addr` and `ip route` inside the pod's netns now, diffed against what the CNI result claimed. */
import type { LiveNetworkView } from '../../../../../../shared/domain/live';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { Section } from '../../../../lib/ui/KeyValues';
import { useLiveNetworkDiff, type LiveNetworkDiff } from '../model/use-live-network-diff';
import { LiveInterfacesTable, LiveRoutesTable } from './LiveNetworkTables';
import { LivePanel } from './LivePanel';

export function LiveNetwork({ s }: { s: SandboxStatus }) {
  return (
    <LivePanel
      id={s.id}
      testId="live-network"
      title="Live in the netns"
      subtitle={<>ip addr / ip route inside the pod's network namespace, compared with the CNI result above.</>}
    >
      {(view) => <LiveNetworkBody view={view} s={s} />}
    </LivePanel>
  );
}

function LiveNetworkBody({ view, s }: { view: LiveNetworkView; s: SandboxStatus }) {
  const diff = useLiveNetworkDiff(view, s);
  return (
    <div className="stack-s">
      <LiveSummary diff={diff} netnsPath={view.netnsPath} />
      <div className="live-cols">
        <div className="col">
          <Section title="Interfaces (ip addr)">
            <LiveInterfacesTable ifaces={diff.ifaces} />
          </Section>
        </div>
        <div className="col">
          <Section title="Routes (ip route)">
            <LiveRoutesTable routes={diff.routes} />
          </Section>
        </div>
      </div>
    </div>
  );
}

/** one line: all there, or how many addresses and routes are missing or extra */
function LiveSummary({ diff, netnsPath }: { diff: LiveNetworkDiff; netnsPath: string }) {
  const { clean, missing, extra, routeMissing } = diff;
  return (
    <div className={`live-summary ${clean ? 'live-summary-ok' : 'live-summary-bad'}`} data-testid="live-network-summary">
      {clean ? (
        '✓ Every address and route the CNI result lists is in the kernel.'
      ) : (
        <>
          {[
            missing && `✗ ${missing} address${missing > 1 ? 'es' : ''} from the CNI result missing in the kernel`,
            routeMissing && `✗ ${routeMissing} route${routeMissing > 1 ? 's' : ''} from the CNI result missing`,
            extra && `+ ${extra} address${extra > 1 ? 'es' : ''} in the kernel the CNI result does not list`,
          ]
            .filter(Boolean)
            .join(' · ')}
        </>
      )}
      <span className="mono small muted live-netns">{netnsPath}</span>
    </div>
  );
}
