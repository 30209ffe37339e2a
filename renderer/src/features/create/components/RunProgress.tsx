/** The steps of a run as the engine reports them, then the outcome. */
import { useEffect, useRef } from 'react';
import type { TraceEntry } from '../../../../../shared/domain/sandbox';
import { ms } from '../../../lib/format';
import { ErrorView } from '../../../lib/ui/ErrorView';

export function RunProgress({
  steps,
  pending,
  error,
  createdId,
  onOpen,
  onAnother,
  clash,
}: {
  steps: TraceEntry[];
  pending: boolean;
  error: unknown;
  createdId?: string;
  onOpen: () => void;
  onAnother: () => void;
  clash?: { existingId: string; onOpenExisting: () => void; onNewUid: () => void };
}) {
  // the outcome arrives after the submit scrolled to the steps: bring the error (and what to do about it) into view
  const outcome = useRef<HTMLDivElement>(null);
  const failed = !!error;
  useEffect(() => {
    if (failed) outcome.current?.scrollIntoView?.({ block: 'nearest' });
  }, [failed]);
  // the submit button is disabled while the engine works: the focus follows the new content instead of falling to
  // <body> — the steps' heading while it runs, then "Open sandbox" or the error
  const head = useRef<HTMLElement>(null);
  const openButton = useRef<HTMLButtonElement>(null);
  const errorBox = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (pending) head.current?.focus();
  }, [pending]);
  useEffect(() => {
    if (createdId) openButton.current?.focus();
  }, [createdId]);
  useEffect(() => {
    if (failed) errorBox.current?.focus();
  }, [failed]);
  return (
    <div className="run-progress" data-testid="run-progress" aria-live="polite">
      <div className="run-progress-head">
        <strong ref={head} tabIndex={-1} data-testid="run-progress-head">
          {pending ? 'Creating sandbox…' : createdId ? 'Sandbox created' : error ? 'Creation failed' : ''}
        </strong>
        {createdId && (
          <>
            <span className="mono muted">{createdId.slice(0, 13)}</span>
            <span className="toolbar-spacer" />
            <button type="button" className="btn btn-primary" onClick={onOpen} ref={openButton}>
              Open sandbox
            </button>
            <button type="button" className="btn" onClick={onAnother}>
              Create another
            </button>
          </>
        )}
      </div>
      <ol className="steps">
        {steps.map((s) => (
          <li key={s.seq} className={s.ok ? 'step step-ok' : 'step step-bad'}>
            <span className="step-icon">{s.ok ? '✓' : '✗'}</span>
            <span className="mono step-name">{s.step}</span>
            <span className="step-label">{s.label}</span>
            <span className="mono muted">{ms(s.durationMs)}</span>
          </li>
        ))}
        {pending && (
          <li className="step step-wait">
            <span className="step-icon spinner" />
            <span className="muted">waiting for the engine…</span>
          </li>
        )}
      </ol>
      {error ? (
        <div ref={errorBox} tabIndex={-1} data-testid="run-error">
          <ErrorView error={error} title="RunPodSandbox failed" />
        </div>
      ) : null}
      {clash && (
        <div className="callout callout-warn clash" data-testid="name-clash">
          <div>
            A sandbox with this name, namespace, uid and attempt already exists (
            <span className="mono">{clash.existingId.slice(0, 13)}</span>). CRI names a sandbox by all four, so either look at that one or
            run another with a new uid.
          </div>
          <div className="clash-actions">
            <button type="button" className="btn btn-primary" onClick={clash.onOpenExisting}>
              Open the existing sandbox
            </button>
            <button type="button" className="btn" onClick={clash.onNewUid}>
              Use a new uid
            </button>
          </div>
        </div>
      )}
      <div ref={outcome} />
    </div>
  );
}
