import { newKvRow, type FieldErrors, type KvRow } from '../model/form-state';

export function KeyValueEditor({
  name,
  rows,
  errors,
  onChange,
  keyPlaceholder,
  disabled,
}: {
  name: 'labels' | 'annotations';
  rows: KvRow[];
  errors: FieldErrors;
  onChange: (rows: KvRow[]) => void;
  keyPlaceholder: string;
  disabled?: boolean;
}) {
  const update = (key: string, patch: Partial<KvRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const singular = name === 'labels' ? 'label' : 'annotation';
  return (
    <div className="rows" data-testid={`${name}-rows`}>
      {rows.map((r, i) => (
        <div key={r.key} className="row-block">
          <div className="kv-grid">
            <input
              className="input mono"
              aria-label={`${singular} ${i + 1} key`}
              aria-invalid={!!errors[`${name}.${r.key}`]}
              placeholder={keyPlaceholder}
              value={r.k}
              disabled={disabled}
              onChange={(e) => update(r.key, { k: e.target.value })}
            />
            <input
              className="input mono"
              aria-label={`${singular} ${i + 1} value`}
              placeholder="value"
              value={r.v}
              disabled={disabled}
              onChange={(e) => update(r.key, { v: e.target.value })}
            />
            <button
              type="button"
              className="btn btn-icon"
              aria-label={`Remove ${singular} ${i + 1}`}
              disabled={disabled}
              onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
            >
              ×
            </button>
          </div>
          {errors[`${name}.${r.key}`] && (
            <div className="field-error" role="alert">
              {errors[`${name}.${r.key}`]}
            </div>
          )}
        </div>
      ))}
      <button type="button" className="btn btn-small" disabled={disabled} onClick={() => onChange([...rows, newKvRow()])}>
        + Add {singular}
      </button>
    </div>
  );
}
