import { useQuery } from '@tanstack/react-query';
import { useClient, useConnection } from '../../../lib/connection-context';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { KeyValues, Section } from '../../../lib/ui/KeyValues';
import { Pill } from '../../../lib/ui/StatusPill';
import { engineInfoQuery, runtimeConditionsQuery } from '../api/queries';
import { useEndpointId } from '../../../lib/endpoint';
import { POD_LOG_DIRECTORY_NOTE, type StartupGcItem } from '../../../../../shared/domain/sandbox';

const GC_KIND_LABEL: Record<StartupGcItem['kind'], string> = {
  'cni-cache-temp': 'CNI cache temp file',
  'record-temp': 'half-written record',
  'state-id-temp': 'half-written state dir id',
  netns: 'network namespace',
  'runc-container': 'runc container',
  process: 'helper process (CNI plugin, runc)',
  'trace-rule': 'TRACE rule of a probe --trace',
};

/** What start-up found left behind by an engine that was killed, and what it did about each item. */
function StartupGcTable({ items }: { items: StartupGcItem[] }) {
  return (
    <Section title="Start-up garbage collection">
      {items.length === 0 ? (
        <p className="small muted" data-testid="startup-gc-empty">
          Nothing was left behind: start-up collected nothing.
        </p>
      ) : (
        <table className="table" data-testid="startup-gc">
          <thead>
            <tr>
              <th>kind</th>
              <th>path / id</th>
              <th>action</th>
              <th>at</th>
            </tr>
          </thead>
          <tbody>
            {items.map((g) => (
              <tr key={`${g.kind}:${g.path ?? g.id ?? ''}`} data-kind={g.kind}>
                <td>{GC_KIND_LABEL[g.kind] ?? g.kind}</td>
                <td className="small" style={{ fontFamily: 'var(--mono)', wordBreak: 'break-all' }}>
                  {g.path ?? g.id}
                </td>
                <td className="small">{g.error ? <Pill tone="bad">{`${g.action} failed: ${g.error}`}</Pill> : g.action}</td>
                <td className="small">{new Date(g.at).toLocaleTimeString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

export function EnginePage() {
  const client = useClient();
  const { environment } = useConnection();
  const endpointId = useEndpointId();
  const info = useQuery(engineInfoQuery(client, endpointId));
  const conditions = useQuery(runtimeConditionsQuery(client, endpointId));
  if (info.isError)
    return (
      <div className="page">
        <ErrorView error={info.error} title="Engine info unavailable" />
      </div>
    );
  const i = info.data;
  // a false condition (NetworkReady with a missing plugin…) is a problem as much as the engine's own list
  const failing = (conditions.data ?? []).filter((c) => !c.status);
  const problemCount = (i?.problems.length ?? 0) + failing.length;
  return (
    <div className="page stack">
      <header className="page-head">
        <h2>Engine</h2>
        {i &&
          conditions.data &&
          (problemCount ? (
            <Pill tone="warn">
              {problemCount} problem{problemCount > 1 ? 's' : ''}
            </Pill>
          ) : (
            <Pill tone="ok">healthy</Pill>
          ))}
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
          {i?.startupGc && <StartupGcTable items={i.startupGc} />}
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
                  ['pod logs', POD_LOG_DIRECTORY_NOTE],
                  ...(i.hostLocalDirs ?? []).map(
                    (d) =>
                      [
                        `host-local (${d.network})`,
                        `${d.dir}${d.defaulted ? " (host-local's default dataDir: the state dir does not move it)" : " (the conflist's ipam.dataDir)"}`,
                      ] as [string, string],
                  ),
                  ['IP preference', i.ipPreference],
                  ...(i.stateDirId ? [['state dir id', i.stateDirId] as [string, string]] : []),
                  [
                    'front end',
                    `${environment.mode}${environment.mode === 'electron' ? (environment.chromiumSandbox ? ' (sandboxed)' : ' (NO Chromium sandbox)') : ''}`,
                  ],
                ]}
              />
            )}
          </Section>
          {i?.runtimeHandlers && (
            <Section title="Runtime handlers">
              <KeyValues
                rows={i.runtimeHandlers.map(
                  (h) =>
                    [
                      `${h.name}${h.default ? ' (default)' : ''}`,
                      h.present ? `${h.version ?? 'present'} (${h.path})` : (h.problem ?? `${h.path} missing`),
                    ] as [string, string],
                )}
              />
            </Section>
          )}
        </div>
      </div>
    </div>
  );
}
