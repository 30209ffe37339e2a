/** Says plainly what the engine cannot do (missing privileges, CNI not ready) instead of failing later. */
import { useQuery } from '@tanstack/react-query';
import { useClient, useConnection, useSocketState } from '../../../lib/connection-context';
import { useNavigation } from '../../../lib/navigation';
import { engineInfoQuery, runtimeConditionsQuery } from '../api/queries';
import { useEndpointId } from '../../../lib/endpoint';

export function EngineBanner() {
  const client = useClient();
  const { environment } = useConnection();
  const socket = useSocketState();
  const endpointId = useEndpointId();
  const setView = useNavigation((s) => s.setView);
  const info = useQuery(engineInfoQuery(client, endpointId));
  const conditions = useQuery(runtimeConditionsQuery(client, endpointId));
  const failing = (conditions.data ?? []).filter((c) => !c.status);
  const problems = info.data?.problems ?? [];
  return (
    <>
      {!environment.chromiumSandbox && (
        <div className="banner banner-bad" role="alert">
          Chromium sandbox disabled: Podscope was started as root with --allow-root. Prefer <span className="mono">podscope serve</span> and
          a normal browser.
        </div>
      )}
      {socket === 'closed' && (
        <div className="banner banner-bad" role="alert">
          Lost the connection to the Podscope host; reconnecting…
        </div>
      )}
      {(problems.length > 0 || failing.length > 0) && (
        <div className="banner banner-warn" role="status" data-testid="engine-problems">
          <b>The engine cannot do everything it should:</b>
          <ul>
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
            {failing.map((c) => (
              <li key={c.type}>
                {c.type} is false{c.reason ? ` (${c.reason})` : ''}
                {c.message ? `: ${c.message}` : ''}
              </li>
            ))}
          </ul>
          <button type="button" className="link" onClick={() => setView('engine')}>
            Engine details
          </button>
        </div>
      )}
    </>
  );
}
