/** Each engine step (netns, CNI, runc…) as a waterfall per phase, so where the time went is obvious. */
import type { SandboxStatus, TraceEntry } from '../../../../../../shared/domain/sandbox';
import { deserializeError } from '../../../../../../shared/domain/errors';
import { ms } from '../../../../lib/format';
import { EmptyState, NotAvailable } from '../../../../lib/ui/EmptyState';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { describePauseExit, describePendingEntry } from '../../../../../../shared/domain/sandbox-release';

/** One verb's steps as a waterfall over its own span (also a container's create and start: ContainerDetails). */
export function Phase({ phase, entries }: { phase: string; entries: TraceEntry[] }) {
  const t0 = Math.min(...entries.map((e) => Date.parse(e.startedAt)));
  const end = Math.max(...entries.map((e) => Date.parse(e.startedAt) + e.durationMs));
  const span = Math.max(end - t0, 1);
  return (
    <section className="phase">
      <header className="phase-head">
        <h3>{phase}</h3>
        <span className="mono muted">{ms(end - t0)} total</span>
      </header>
      <ol className="waterfall">
        {entries.map((e) => {
          const left = ((Date.parse(e.startedAt) - t0) / span) * 100;
          const width = Math.max(0.6, (e.durationMs / span) * 100);
          return (
            <li key={e.seq} className={`wf-row${e.ok ? '' : ' wf-fail'}${e.plugin ? ' wf-plugin' : ''}`}>
              <span className="wf-step mono">{e.step}</span>
              <span className="wf-label" title={e.detail ? JSON.stringify(e.detail) : undefined}>
                {e.label}
                {e.detail && (
                  <span className="wf-detail mono muted">
                    {' '}
                    {Object.entries(e.detail)
                      .slice(0, 3)
                      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
                      .join(' ')}
                  </span>
                )}
              </span>
              <span className="wf-track">
                <span className="wf-bar" style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }} />
              </span>
              <span className="wf-dur mono">{ms(e.durationMs)}</span>
              {!e.ok && e.error && (
                <div className="wf-error">
                  <ErrorView error={deserializeError(e.error)} />
                </div>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

export function LifecycleTab({ s, traced = true, runtime }: { s: SandboxStatus; traced?: boolean; runtime?: string }) {
  if (!traced) return <NotAvailable what="Lifecycle steps" runtime={runtime} />;
  if (s.trace.length === 0) return <EmptyState title="No lifecycle steps recorded" />;
  const phases = [...new Set(s.trace.map((t) => t.phase))];
  return (
    <div className="stack">
      {s.pauseExit && <div className="callout callout-warn">{describePauseExit(s.pauseExit)}</div>}
      {s.cleanupPending?.length ? (
        <div className="callout callout-bad" data-testid="lifecycle-cleanup-pending">
          Cleanup pending (retried by stop/remove): {s.cleanupPending.map(describePendingEntry).join(' | ')}
        </div>
      ) : null}
      {phases.map((p) => (
        <Phase key={p} phase={p} entries={s.trace.filter((t) => t.phase === p)} />
      ))}
    </div>
  );
}
