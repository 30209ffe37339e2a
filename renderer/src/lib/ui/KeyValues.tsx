/** A two-column definition table; values are rendered monospace when `mono` says so. */
export function KeyValues({ rows, mono = true }: { rows: Array<[string, React.ReactNode]>; mono?: boolean }) {
  return (
    <dl className={mono ? 'kv kv-mono' : 'kv'}>
      {rows.map(([k, v]) => (
        <div className="kv-row" key={k}>
          <dt>{k}</dt>
          <dd>{v === undefined || v === '' || v === null ? <span className="muted">—</span> : v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function LabelChips({ map, empty = 'none' }: { map: Record<string, string>; empty?: string }) {
  const entries = Object.entries(map);
  if (!entries.length) return <span className="muted">{empty}</span>;
  return (
    <span className="chips">
      {entries.map(([k, v]) => (
        <span className="chip" key={k} title={`${k}=${v}`}>
          <span className="chip-k">{k}</span>
          {v !== '' && <span className="chip-v">{v}</span>}
        </span>
      ))}
    </span>
  );
}

export function Section({ title, children, aside }: { title: string; children: React.ReactNode; aside?: React.ReactNode }) {
  return (
    <section className="section">
      <header className="section-head">
        <h3>{title}</h3>
        {aside}
      </header>
      {children}
    </section>
  );
}
