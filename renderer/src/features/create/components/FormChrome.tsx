/** Around the create form's fields: the bar (import, export, reset), the notice of an import or clone, the submit row. */
import { useEffect, useRef } from 'react';
import type { FormNotice } from '../api/use-create-form';

export function FormBar({
  onImport,
  onExportJson,
  onExportYaml,
  onReset,
}: {
  onImport: () => void;
  onExportJson: () => void;
  onExportYaml: () => void;
  onReset: () => void;
}) {
  return (
    <div className="form-bar">
      <h2>New pod sandbox</h2>
      <span className="toolbar-spacer" />
      <button type="button" className="btn" onClick={onImport}>
        Import crictl…
      </button>
      <button type="button" className="btn" onClick={onExportJson}>
        Export JSON
      </button>
      <button type="button" className="btn" onClick={onExportYaml}>
        Export YAML
      </button>
      <button type="button" className="btn btn-ghost" onClick={onReset}>
        Reset
      </button>
    </div>
  );
}

/**
 * In the page flow, never over the fields (a sticky notice covered them). An import is started from the bar wherever
 * the form is scrolled, so a new notice brings itself into view and takes the focus: its warnings are read where the
 * user is looking, and Tab goes on from there.
 */
export function NoticeCallout({ notice, onDismiss }: { notice: FormNotice; onDismiss: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // jsdom has no scrollIntoView: the component tests render it too
    ref.current?.scrollIntoView?.({ block: 'nearest' });
    ref.current?.focus({ preventScroll: true });
  }, [notice]);
  return (
    <div
      ref={ref}
      tabIndex={-1}
      className={`callout form-notice${notice.warnings.length ? ' callout-warn' : ''}`}
      data-testid="import-notice"
      role="status"
    >
      <div className="callout-title">
        {notice.title}
        <button type="button" className="btn btn-ghost btn-small notice-close" aria-label="Dismiss" onClick={onDismiss}>
          ×
        </button>
      </div>
      {notice.warnings.length > 0 && (
        <ul className="warn-list">
          {notice.warnings.map((w) => (
            <li key={w} className="mono">
              {w}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function SubmitRow({ locked, errorCount, endpointId }: { locked: boolean; errorCount: number; endpointId: string }) {
  return (
    <div className="form-submit">
      <button type="submit" className="btn btn-primary btn-large" disabled={locked}>
        {locked ? 'Creating…' : 'Create sandbox'}
      </button>
      {errorCount > 0 && (
        <span className="text-bad" role="alert" data-testid="form-error-summary">
          {errorCount} field{errorCount > 1 ? 's' : ''} need{errorCount > 1 ? '' : 's'} attention; nothing was created.
        </span>
      )}
      <span className="toolbar-spacer" />
      <span className="muted small">
        endpoint <span className="mono">{endpointId}</span>
      </span>
    </div>
  );
}
