import { PodscopeError } from '../../../../shared/domain/errors';
import { JsonView } from './JsonView';

/** An error as the engine reported it: the stable code, the message, and the structured details. */
export function ErrorView({ error, title }: { error: unknown; title?: string }) {
  const e = error instanceof PodscopeError ? error : undefined;
  const code = e?.code ?? 'Error';
  const message = error instanceof Error ? error.message : String(error);
  const cause = e?.cause instanceof PodscopeError ? e.cause : undefined;
  return (
    <div className="error-box" role="alert">
      <div className="error-head">
        <span className="error-code">{code}</span>
        {title && <strong>{title}</strong>}
      </div>
      <div className="error-msg">{message}</div>
      {cause && (
        <div className="error-cause">
          caused by <span className="error-code">{cause.code}</span> {cause.message}
        </div>
      )}
      {e?.details !== undefined && (
        <details className="error-details">
          <summary>details</summary>
          <JsonView value={e.details} />
        </details>
      )}
    </div>
  );
}
