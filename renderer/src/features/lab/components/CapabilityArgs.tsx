/** The side panel of the lab: capability args, the live sandboxes a run would touch, probe, Run and Save. */
import type { LabModel } from '../api/use-lab';
import type { CapsForm } from '../model/capabilities';
import { ErrorView } from '../../../lib/ui/ErrorView';

const FIELDS: Array<{ key: keyof CapsForm; label: string; placeholder?: string }> = [
  { key: 'ports', label: 'port mappings', placeholder: '28080:80/tcp, …' },
  { key: 'ingress', label: 'ingress bit/s', placeholder: '1M' },
  { key: 'egress', label: 'egress bit/s', placeholder: '2M' },
  { key: 'dns', label: 'dns servers' },
  { key: 'ips', label: 'ips', placeholder: '10.99.0.9/24' },
  { key: 'mac', label: 'mac' },
  { key: 'cgroupPath', label: 'cgroupPath' },
];

export function CapabilityArgs({ lab, onSave }: { lab: LabModel; onSave: () => void }) {
  const { capsForm, setCapsForm, problem, conflicts, force, setForce, probe, setProbe, caps, canRun, run, save } = lab;
  return (
    <div className="stack-s lab-side">
      <div className="section-head">
        <strong>Capability args</strong>
      </div>
      {FIELDS.map((f) => (
        <label key={f.key} className="lab-field">
          {f.label}{' '}
          <input
            className="input mono"
            placeholder={f.placeholder}
            value={capsForm[f.key]}
            onChange={(e) => setCapsForm({ ...capsForm, [f.key]: e.target.value })}
          />
        </label>
      ))}
      {problem && <div className="small text-bad">{problem}</div>}
      {conflicts.length > 0 && (
        <div className="callout callout-warn small" data-testid="lab-conflicts">
          <div className="callout-title">This conflist shares networking with live sandboxes — a run touches them</div>
          {conflicts.map((c) => (
            <div key={c.sandboxId + c.network}>
              <span className="mono">{c.sandboxName || c.sandboxId.slice(0, 13)}</span> ({c.network}): {c.shares.join(', ')}
            </div>
          ))}
          <label>
            <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> run anyway (force)
          </label>
        </div>
      )}
      <label className="small">
        <input type="checkbox" checked={probe} onChange={(e) => setProbe(e.target.checked)} /> probe reachability after ADD (host → netns
        address{caps.portMappings?.length ? ', host ports' : ''}), before DEL
      </label>
      <div className="toolbar toolbar-plain">
        <button type="button" className="btn btn-primary" disabled={!canRun} onClick={lab.startRun}>
          {run.isPending ? 'Running…' : 'Run'}
        </button>
        <button type="button" className="btn" disabled={lab.validation?.ok !== true} onClick={onSave}>
          Save…
        </button>
      </div>
      {save.data && (
        <div className="callout callout-ok small" data-testid="lab-saved">
          Saved {save.data.path}
          {save.data.backup ? ` (previous kept as ${save.data.backup})` : ''}
        </div>
      )}
      {save.error && <ErrorView error={save.error} title="Save failed" />}
    </div>
  );
}
