/** A segmented switch between a few views (tab semantics: one is selected), the app's "seg" buttons in one place. */
export interface SegmentDef<K extends string> {
  id: K;
  label: React.ReactNode;
  title?: string;
}

export function Segmented<K extends string>({
  segments,
  value,
  onChange,
  label,
}: {
  segments: readonly SegmentDef<K>[];
  value: K;
  onChange: (k: K) => void;
  label: string;
}) {
  return (
    <div className="seg" role="tablist" aria-label={label}>
      {segments.map((s) => (
        <button
          key={s.id}
          type="button"
          role="tab"
          aria-selected={value === s.id}
          className={value === s.id ? 'seg-btn seg-on' : 'seg-btn'}
          title={s.title}
          onClick={() => onChange(s.id)}
        >
          {s.label}
        </button>
      ))}
    </div>
  );
}
