/** The CNI configuration the engine loaded: networks in attach order, their plugins, capabilities and load errors. */
import { dateTime } from '../../../lib/format';
import { EmptyState, NotAvailable } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { Pill } from '../../../lib/ui/StatusPill';
import { missingPluginText, type CniConfigView } from '../../../../../shared/domain/cni';
import { STARTER_CONFLIST } from '../../../lib/starter-conflist';
import { conflistText, useCniConfig } from '../model/use-cni-config';
import { CniNetworkCard } from './CniNetworkCard';

export function CniPanel() {
  const { available, q, labAvailable, openInLab } = useCniConfig();
  if (!available)
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
      <CniLoadProblems c={c} />
      {c.networks.length === 0 ? (
        <EmptyState title="No network configuration">
          Put a .conflist in {c.confDir}; the engine reloads it when the directory changes.
        </EmptyState>
      ) : (
        c.networks.map((n) => (
          <CniNetworkCard
            key={n.name}
            n={n}
            onOpenInLab={labAvailable ? (net) => openInLab(conflistText(net), net.source ?? net.name) : undefined}
          />
        ))
      )}
    </div>
  );
}

/** what keeps the configuration from working: not ready, missing plugin binaries, skipped files, load errors */
function CniLoadProblems({ c }: { c: CniConfigView }) {
  const missing = c.missingPlugins ?? [];
  return (
    <>
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
    </>
  );
}
