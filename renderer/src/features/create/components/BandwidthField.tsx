/** Value + unit → the annotation text, parsed live with containerd's rules (shared/domain/bandwidth). */
import { useId } from 'react';
import { BANDWIDTH_UNITS, parseBandwidthValue, formatBitsPerSecond } from '../../../../../shared/domain/bandwidth';
import { BANDWIDTH_ACCEPTED, bandwidthQuantity, splitTypedUnit, type BandwidthInput } from '../model/form-state';

export function BandwidthField({
  dir,
  annotation,
  value,
  error,
  onChange,
  disabled,
}: {
  dir: 'ingress' | 'egress';
  annotation: string;
  value: BandwidthInput;
  error?: string;
  onChange: (v: BandwidthInput) => void;
  disabled?: boolean;
}) {
  const id = useId();
  const q = bandwidthQuantity(value);
  const parsed = q !== undefined ? parseBandwidthValue(q) : undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{dir === 'ingress' ? 'Ingress (to the pod)' : 'Egress (from the pod)'}</label>
      <div className="bw-input">
        <input
          id={id}
          className="input mono"
          aria-label={`${dir} bandwidth`}
          aria-invalid={!!error}
          placeholder="unlimited"
          value={value.value}
          disabled={disabled}
          title={BANDWIDTH_ACCEPTED}
          onChange={(e) =>
            onChange(
              value.unit !== ''
                ? (splitTypedUnit(e.target.value) ?? { ...value, value: e.target.value })
                : { ...value, value: e.target.value },
            )
          }
        />
        <select
          className="input"
          aria-label={`${dir} bandwidth unit`}
          value={value.unit}
          disabled={disabled}
          onChange={(e) => onChange({ ...value, unit: e.target.value as BandwidthInput['unit'] })}
        >
          <option value="">(no suffix)</option>
          {BANDWIDTH_UNITS.map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>
      </div>
      <div className="bw-line mono">
        <span className="muted">{annotation}</span>
        {q !== undefined && <span>: {JSON.stringify(q)}</span>}
        {parsed && 'bits' in parsed && (
          <span className="bw-ok">
            {' '}
            → {parsed.bits.toString()} bit/s = {formatBitsPerSecond(parsed.bits)}
          </span>
        )}
      </div>
      {error && (
        <div className="field-error" role="alert" data-testid={`${dir}-error`}>
          {error}
        </div>
      )}
    </div>
  );
}
