/** A labelled input with its inline error; the error is linked with aria-describedby for screen readers. */
import { useId } from 'react';

export function Field({
  label,
  error,
  hint,
  children,
  wide,
}: {
  label: string;
  error?: string;
  hint?: React.ReactNode;
  children: (p: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => React.ReactNode;
  wide?: boolean;
}) {
  const id = useId();
  const errId = `${id}-err`;
  return (
    <div className={`field${wide ? ' field-wide' : ''}${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': !!error, 'aria-describedby': error ? errId : undefined })}
      {error ? (
        <div className="field-error" id={errId} role="alert">
          {error}
        </div>
      ) : (
        hint && <div className="field-hint">{hint}</div>
      )}
    </div>
  );
}
