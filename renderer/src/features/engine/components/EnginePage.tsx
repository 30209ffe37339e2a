import { useQuery } from '@tanstack/react-query';
import { useClient, useConnection } from '../../../lib/connection-context';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { KeyValues, Section } from '../../../lib/ui/KeyValues';
import { Pill } from '../../../lib/ui/StatusPill';
import { engineInfoQuery, runtimeConditionsQuery } from '../api/queries';
import { useEndpointId } from '../../../lib/endpoint';

export function EnginePage() {
  const client = useClient();
  const { environment } = useConnection();
  const endpointId = useEndpointId();
  const info = useQuery(engineInfoQuery(client, endpointId));
  const conditions = useQuery(runtimeConditionsQuery(client, endpointId));
  if (info.isError) return <div className="page"><ErrorView error={info.error} title="Engine info unavailable" /></div>;
  const i = info.data;
  // a false condition (NetworkReady with a missing plugin…) is a problem as much as the engine's own list
  const failing = (conditions.data ?? []).filter((c) => !c.status);
  const problemCount = (i?.problems.length ?? 0) + failing.length;
  return (
    <div className="page stack">
      <header className="page-head">
        <h2>Engine</h2>
        {i && conditions.data && (problemCount ? <Pill tone="warn">{problemCount} problem{problemCount > 1 ? 's' : ''}</Pill> : <Pill tone="ok">healthy</Pill>)}
      </header>
      <div className="cols">
        <div className="col">
          <Section title="Runtime conditions">
            <table className="table">
              <tbody>
                {(conditions.data ?? []).map((c) => (
                  <tr key={c.type}>
                    <th>{c.type}</th>
                    <td>{c.status ? <Pill tone="ok">true</Pill> : <Pill tone="bad">false</Pill>}</td>
                    <td className="small">{[c.reason, c.message].filter(Boolean).join(': ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Section>
          {i && i.problems.length > 0 && (
            <Section title="Problems">
              <ul className="problem-list">
                {i.problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </Section>
          )}
        </div>
        <div className="col">
          <Section title="Process and directories">
            {i && (
              <KeyValues
                rows={[
                  ['version', i.version],
                  ['pid / uid', `${i.pid} / ${i.uid}`],
                  ['state dir', i.stateDir],
                  ['run dir', i.runDir],
                  ['netns dir', i.netnsDir],
                  ['CNI conf dir', i.cniConfDir],
                  ['CNI bin dirs', i.cniBinDirs.join(':')],
                  ['CNI cache dir', i.cniCacheDir],
                  ['IP preference', i.ipPreference],
                  ['front end', `${environment.mode}${environment.mode === 'electron' ? (environment.chromiumSandbox ? ' (sandboxed)' : ' (NO Chromium sandbox)') : ''}`],
                ]}
              />
            )}
          </Section>
        </div>
      </div>
    </div>
  );
}
