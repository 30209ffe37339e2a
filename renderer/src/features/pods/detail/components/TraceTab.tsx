/**
 * Every CNI plugin exec as a timeline: verb, plugin, network/interface, duration bar, exit code. Each expands to
 * the exact stdin (runtimeConfig highlighted), the result on stdout, stderr and the CNI_* environment. Failures
 * are red and open by default.
 */
import { useState } from 'react';
import type { SandboxStatus, TraceEntry } from '../../../../../../shared/domain/sandbox';
import { deserializeError } from '../../../../../../shared/domain/errors';
import { ms, prettyJson } from '../../../../lib/format';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { EmptyState, NotAvailable } from '../../../../lib/ui/EmptyState';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { JsonView, parseMaybeJson } from '../../../../lib/ui/JsonView';
import { Pill } from '../../../../lib/ui/StatusPill';
import { CniCheckPanel } from './CniCheckPanel';

function PluginCallView({ t }: { t: TraceEntry }) {
  const p = t.plugin!;
  const [pane, setPane] = useState<'stdin' | 'stdout' | 'stderr' | 'env'>(t.ok ? 'stdin' : p.stdout ? 'stdout' : 'stderr');
  const body =
    pane === 'stdin'
      ? prettyJson(p.stdin)
      : pane === 'stdout'
        ? prettyJson(p.stdout)
        : pane === 'stderr'
          ? p.stderr
          : JSON.stringify(p.env, null, 2);
  // Copy gives the exact bytes the plugin saw or printed; the view is pretty-printed for reading.
  const exact = pane === 'stdin' ? p.stdin : pane === 'stdout' ? p.stdout : body;
  const runtimeConfig = (parseMaybeJson(p.stdin) as { runtimeConfig?: unknown } | undefined)?.runtimeConfig;
  return (
    <div className="call">
      <div className="call-meta">
        <span>
          exit code <b className={`mono ${p.exitCode === 0 ? '' : 'text-bad'}`}>{p.exitCode ?? (p.signal ? `signal ${p.signal}` : '—')}</b>
        </span>
        {p.timedOut && <Pill tone="bad">timed out</Pill>}
        <span className="mono muted">{p.binary ?? p.type}</span>
        <span className="toolbar-spacer" />
        <div className="seg" role="group" aria-label="Plugin call stream">
          {(['stdin', 'stdout', 'stderr', 'env'] as const).map((k) => (
            <button key={k} type="button" className={pane === k ? 'seg-btn seg-on' : 'seg-btn'} onClick={() => setPane(k)}>
              {k}
              {k === 'stderr' && p.stderr ? ' •' : ''}
            </button>
          ))}
        </div>
        <CopyButton text={exact} label={pane === 'stdin' || pane === 'stdout' ? 'Copy exact bytes' : 'Copy'} />
      </div>
      {pane === 'stdin' &&
        (runtimeConfig === undefined ? (
          <div className="small muted">no runtimeConfig: this plugin declares no capability the sandbox supplies</div>
        ) : (
          <div className="rc-summary">
            <div className="small muted">runtimeConfig this plugin received (also highlighted in the full stdin below)</div>
            <JsonView value={{ runtimeConfig }} highlightKey="runtimeConfig" />
          </div>
        ))}
      {body.trim() === '' ? (
        <div className="muted small pad-s">(empty)</div>
      ) : (
        <JsonView value={body} highlightKey={pane === 'stdin' ? 'runtimeConfig' : undefined} />
      )}
      {t.error && <ErrorView error={deserializeError(t.error)} />}
    </div>
  );
}

export function TraceTab({ s, available, runtime }: { s: SandboxStatus; available: boolean; runtime?: string }) {
  const calls = s.trace.filter((t) => t.plugin);
  const [open, setOpen] = useState<Set<number>>(() => new Set(calls.filter((c) => !c.ok).map((c) => c.seq)));
  // a CRI runtime records no plugin trace, but its pods' CHECK is run here (with the cached result, read-only)
  if (!available)
    return (
      <div className="stack">
        <CniCheckPanel s={s} />
        <NotAvailable what="CNI plugin trace" runtime={runtime} />
      </div>
    );
  if (calls.length === 0) {
    return (
      <EmptyState title="No plugin calls recorded">
        {s.hostNetwork ? 'Host-network sandboxes do not run CNI.' : 'CNI has not run for this sandbox yet.'}
      </EmptyState>
    );
  }
  const max = Math.max(...calls.map((c) => c.durationMs), 1);
  const toggle = (seq: number) =>
    setOpen((o) => {
      const n = new Set(o);
      if (n.has(seq)) n.delete(seq);
      else n.add(seq);
      return n;
    });
  return (
    <div className="stack">
      <CniCheckPanel s={s} />
      <ol className="timeline" data-testid="cni-trace">
        {calls.map((t) => {
          const p = t.plugin!;
          const isOpen = open.has(t.seq);
          // a known defect of the plugin's release is a warning (amber), not the network's failure
          const defect = !t.ok && (t.error?.details as { knownDefect?: unknown } | undefined)?.knownDefect !== undefined;
          return (
            <li
              key={t.seq}
              className={`tl-item${t.ok || defect ? '' : ' tl-fail'}`}
              data-plugin={p.type}
              data-verb={p.verb}
              data-phase={t.phase}
            >
              <button type="button" className="tl-head" aria-expanded={isOpen} onClick={() => toggle(t.seq)}>
                <span className="tl-caret">{isOpen ? '▾' : '▸'}</span>
                <span className={`verb verb-${p.verb.toLowerCase()}`}>{p.verb}</span>
                <span className="tl-plugin mono">{p.type}</span>
                <span className="tl-net mono muted">
                  {p.network}/{p.ifName} #{p.index}
                </span>
                <span className="tl-phase muted">{t.phase}</span>
                <span className="tl-bar">
                  <span className="tl-bar-fill" style={{ width: `${Math.max(2, (t.durationMs / max) * 100)}%` }} />
                </span>
                <span className="tl-dur mono">{ms(t.durationMs)}</span>
                {t.ok ? (
                  <Pill tone="ok">exit {p.exitCode ?? 0}</Pill>
                ) : defect ? (
                  <Pill tone="warn">known defect{p.exitCode !== null ? ` · exit ${p.exitCode}` : ''}</Pill>
                ) : (
                  <Pill tone="bad">failed{p.exitCode !== null ? ` · exit ${p.exitCode}` : ''}</Pill>
                )}
              </button>
              {isOpen && <PluginCallView t={t} />}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

export const stdinOf = (t: TraceEntry) => parseMaybeJson(t.plugin?.stdin ?? '');
