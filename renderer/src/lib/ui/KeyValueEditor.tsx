/**
 * Rows of key = value with add and remove: the pod form's labels and annotations, the container form's environment.
 * Each row's error (keyed `<errorPrefix>.<row key>`) shows under it and marks its key input invalid.
 */
export interface KeyValueRow {
  /** stable React key of the row (not the user's key) */
  key: string;
  k: string;
  v: string;
}

export function KeyValueEditor({
  rows,
  onChange,
  newRow,
  errors,
  errorPrefix,
  noun,
  keyWord = 'key',
  keyPlaceholder,
  addLabel,
  testId,
  disabled,
}: {
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  newRow: () => KeyValueRow;
  errors: Partial<Record<string, string>>;
  errorPrefix: string;
  /** what one row is, in the inputs' labels: "label 1 key", "env 2 value" */
  noun: string;
  /** what the key is called in its label ("key", "name") */
  keyWord?: string;
  keyPlaceholder: string;
  addLabel: string;
  testId: string;
  disabled?: boolean;
}) {
  const update = (key: string, patch: Partial<KeyValueRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <div className="rows" data-testid={testId}>
      {rows.map((r, i) => {
        const error = errors[`${errorPrefix}.${r.key}`];
        return (
          <div key={r.key} className="row-block">
            <div className="kv-grid">
              <input
                className="input mono"
                aria-label={`${noun} ${i + 1} ${keyWord}`}
                aria-invalid={!!error}
                placeholder={keyPlaceholder}
                value={r.k}
                disabled={disabled}
                onChange={(e) => update(r.key, { k: e.target.value })}
              />
              <input
                className="input mono"
                aria-label={`${noun} ${i + 1} value`}
                placeholder="value"
                value={r.v}
                disabled={disabled}
                onChange={(e) => update(r.key, { v: e.target.value })}
              />
              <button
                type="button"
                className="btn btn-icon"
                aria-label={`Remove ${noun} ${i + 1}`}
                disabled={disabled}
                onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
              >
                ×
              </button>
            </div>
            {error && (
              <div className="field-error" role="alert">
                {error}
              </div>
            )}
          </div>
        );
      })}
      <button type="button" className="btn btn-small" disabled={disabled} onClick={() => onChange([...rows, newRow()])}>
        {addLabel}
      </button>
    </div>
  );
}
