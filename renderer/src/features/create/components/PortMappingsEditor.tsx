import type { ProtocolName } from '../../../../../shared/domain/config';
import { newPortRow, type FieldErrors, type PortRow } from '../model/form-state';

export function PortMappingsEditor({
  rows,
  errors,
  onChange,
  disabled,
}: {
  rows: PortRow[];
  errors: FieldErrors;
  onChange: (rows: PortRow[]) => void;
  disabled?: boolean;
}) {
  const update = (key: string, patch: Partial<PortRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <div className="rows" data-testid="port-rows">
      {rows.length > 0 && (
        <div className="rows-head ports-grid">
          <span>protocol</span>
          <span>container port</span>
          <span>host port</span>
          <span>host IP</span>
          <span />
        </div>
      )}
      {rows.map((r, i) => {
        const err = (f: string) => errors[`ports.${r.key}.${f}`];
        const dropped = !err('hostPort') && Number(r.hostPort || 0) <= 0 && r.containerPort !== '';
        return (
          <div key={r.key} className="row-block" data-testid={`port-row-${i}`}>
            <div className="ports-grid">
              <select
                className="input"
                aria-label={`Port ${i + 1} protocol`}
                value={r.protocol}
                disabled={disabled}
                onChange={(e) => update(r.key, { protocol: e.target.value as ProtocolName })}
              >
                <option value="TCP">TCP</option>
                <option value="UDP">UDP</option>
                <option value="SCTP">SCTP</option>
              </select>
              <input
                className="input mono"
                aria-label={`Port ${i + 1} container port`}
                aria-invalid={!!err('containerPort')}
                inputMode="numeric"
                placeholder="80"
                value={r.containerPort}
                disabled={disabled}
                onChange={(e) => update(r.key, { containerPort: e.target.value })}
              />
              <input
                className="input mono"
                aria-label={`Port ${i + 1} host port`}
                aria-invalid={!!err('hostPort')}
                inputMode="numeric"
                placeholder="0"
                value={r.hostPort}
                disabled={disabled}
                onChange={(e) => update(r.key, { hostPort: e.target.value })}
              />
              <input
                className="input mono"
                aria-label={`Port ${i + 1} host IP`}
                aria-invalid={!!err('hostIp')}
                placeholder="all addresses"
                value={r.hostIp}
                disabled={disabled}
                onChange={(e) => update(r.key, { hostIp: e.target.value })}
              />
              <button
                type="button"
                className="btn btn-icon"
                aria-label={`Remove port ${i + 1}`}
                disabled={disabled}
                onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
              >
                ×
              </button>
            </div>
            {(['containerPort', 'hostPort', 'hostIp'] as const).map(
              (f) =>
                err(f) && (
                  <div key={f} className="field-error" role="alert">
                    {err(f)}
                  </div>
                ),
            )}
            {dropped && (
              <div className="field-note">
                host port 0: containerd does not pass this mapping to CNI; it is reachable on the pod IP only
              </div>
            )}
          </div>
        );
      })}
      <button type="button" className="btn btn-small" disabled={disabled} onClick={() => onChange([...rows, newPortRow()])}>
        + Add port mapping
      </button>
    </div>
  );
}
