/** The CNI configuration the engine loaded: networks in attach order, their plugins, capabilities and load errors. */
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { dateTime } from '../../../lib/format';
import { EmptyState, NotAvailable } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { JsonView } from '../../../lib/ui/JsonView';
import { Pill } from '../../../lib/ui/StatusPill';
import { useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { useNavigation } from '../../../lib/navigation';
import type { CniNetworkView } from '../../../../../shared/domain/cni';
import { LOCAL_ENDPOINT_ID } from '../../../../../shared/domain/endpoints';
import { cniConfigQuery } from '../api/queries';
import { missingPluginText } from '../../../../../shared/domain/cni';
import { NetworkTopology } from './NetworkTopology';
import { STARTER_CONFLIST } from '../../../lib/starter-conflist';

/** The network as a conflist text again (what the lab edits): the plugins exactly as written in the file. */
export function conflistText(n: CniNetworkView): string {
  return JSON.stringify(
    { cniVersion: n.cniVersion, name: n.name, ...(n.disableCheck ? { disableCheck: true } : {}), plugins: n.plugins.map((p) => p.raw) },
    null,
    2,
  );
}

export function CniPanel() {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const q = useQuery({ ...cniConfigQuery(client, endpointId), enabled: caps.cniConfig });
  const openInLab = useNavigation((s) => s.openInLab);
  // the lab runs plugins on this host: only the local engine has one
  const labAvailable = endpointId === LOCAL_ENDPOINT_ID;
  if (!caps.cniConfig)
    return (
      <div className="page">
        <NotAvailable what="CNI configuration" />
      </div>
    );
  if (q.isError)
    return (
      <div className="page">
        <ErrorView error={q.error} title="Could not read the CNI configuration" />
      </div>
    );
  if (!q.data) return <div className="page muted">Loading…</div>;
  const c = q.data;
  const missing = c.missingPlugins ?? [];
  // loaded is not enough: a network whose plugin binary is missing fails every run, so it is not ready either
  const ready = c.ready && missing.length === 0;
  return (
    <div className="page stack" data-testid="cni-panel">
      <header className="page-head">
        <h2>CNI configuration</h2>
        {ready ? (
          <Pill tone="ok">NetworkReady</Pill>
        ) : (
          <Pill tone="bad" title={c.notReadyReason ?? (missing[0] && missingPluginText(missing[0], c.binDirs))}>
            not ready
          </Pill>
        )}
        <span className="muted small">loaded {dateTime(c.loadedAt)}</span>
        <span className="toolbar-spacer" />
        {labAvailable && (
          <button type="button" className="btn" onClick={() => openInLab(STARTER_CONFLIST, 'new conflist')}>
            New
          </button>
        )}
      </header>
      <div className="kv-inline">
        <span>
          conf dir <b className="mono">{c.confDir}</b>
        </span>
        <span>
          bin dirs <b className="mono">{c.binDirs.join(':')}</b>
        </span>
        <span>
          max networks <b className="mono">{c.maxConfNum}</b>
        </span>
      </div>
      {!c.ready && c.notReadyReason && <div className="callout callout-bad">{c.notReadyReason}</div>}
      {missing.length > 0 && (
        <div className="callout callout-bad" data-testid="cni-missing-plugins">
          <div className="callout-title">Every run would fail: a plugin binary is missing</div>
          {missing.map((m) => (
            <div key={`${m.network}-${m.index}`}>{missingPluginText(m, c.binDirs)}</div>
          ))}
        </div>
      )}
      {(c.skipped ?? []).length > 0 && (
        <div className="callout callout-warn" data-testid="cni-skipped">
          <div className="callout-title">Skipped files</div>
          {(c.skipped ?? []).map((f) => (
            <div key={f.source} data-source={f.source}>
              <span className="mono">{f.source}</span>: {f.reason}
            </div>
          ))}
        </div>
      )}
      {c.errors.length > 0 && (
        <div className="callout callout-bad">
          <div className="callout-title">Load errors</div>
          {c.errors.map((e) => (
            <div key={e.source + e.message}>
              <span className="mono">{e.source}</span>: {e.message}
            </div>
          ))}
        </div>
      )}
      {c.networks.length === 0 ? (
        <EmptyState title="No network configuration">
          Put a .conflist in {c.confDir}; the engine reloads it when the directory changes.
        </EmptyState>
      ) : (
        c.networks.map((n) => (
          <section key={n.name} className="card">
            <header className="card-head">
              <h3 className="mono">{n.name}</h3>
              <Pill tone="muted">{n.ifName}</Pill>
              <span className="mono muted small">cniVersion {n.cniVersion}</span>
              {n.builtin && <Pill tone="info">built-in</Pill>}
              {n.disableCheck && <Pill tone="muted">disableCheck</Pill>}
              <span className="toolbar-spacer" />
              <span className="mono muted small">{n.source ?? 'generated by the engine'}</span>
              {labAvailable && (
                <button type="button" className="btn btn-small" onClick={() => openInLab(conflistText(n), n.source ?? n.name)}>
                  Open in lab
                </button>
              )}
            </header>
            {!n.builtin && <NetworkTopology network={n.name} />}
            <table className="table">
              <thead>
                <tr>
                  <th>#</th>
                  <th>type</th>
                  <th>capabilities</th>
                  <th>binary</th>
                  <th>configuration</th>
                </tr>
              </thead>
              <tbody>
                {n.plugins.map((p, i) => (
                  <tr key={i}>
                    <td className="mono muted">{i}</td>
                    <td className="mono">
                      <b>{p.type}</b>
                    </td>
                    <td>
                      {p.capabilities.length ? (
                        p.capabilities.map((cap) => (
                          <Pill key={cap} tone="info">
                            {cap}
                          </Pill>
                        ))
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td className="mono">{p.binary ?? <span className="text-bad">not found in bin dirs</span>}</td>
                    <td>
                      <details>
                        <summary className="small">as written</summary>
                        <JsonView value={p.raw} />
                      </details>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        ))
      )}
    </div>
  );
}
