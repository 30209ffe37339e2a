/**
 * The pod's network: namespace mode, the hostname it really gets (CRI leaves an empty hostname to the host's), IP
 * preference, cgroup parent; then its port mappings and bandwidth annotations.
 */
import { EGRESS_ANNOTATION, INGRESS_ANNOTATION } from '../../../../../shared/domain/bandwidth';
import { IP_PREFERENCES } from '../../../../../shared/domain/config';
import type { FormState } from '../model/form-state';
import { BandwidthField } from './BandwidthField';
import { Field, TextInput } from './Field';
import { PortMappingsEditor } from './PortMappingsEditor';
import type { SectionProps } from './section-props';

/** the handlers a Podscope engine has (engine/runtime/oci-runtime.ts); another CRI peer may refuse crun */
const RUNTIME_HANDLER_CHOICES = ['runc', 'crun'];

/** the hostname field says what the pod will really be called: CRI leaves an empty hostname to the host's */
function hostnameHint(form: FormState): string {
  if (form.network === 'host') return "host network: the pod shares the host's UTS namespace and keeps the host's hostname";
  if (form.hostname.trim()) return "set in the pod's own UTS namespace and written to its /etc/hostname";
  return `empty: the pod gets its own UTS namespace but keeps the host's hostname (kubelet would set "${form.name.trim() || 'the pod name'}": type it to do the same)`;
}

export function NetworkSection({ form, set, errors, locked }: SectionProps) {
  return (
    <fieldset className="form-section" disabled={locked}>
      <legend>Network</legend>
      <div className="form-grid">
        <div className="field">
          <span className="label">Namespace mode</span>
          <div className="seg" role="radiogroup" aria-label="Network mode">
            {(['pod', 'host'] as const).map((m) => (
              <label key={m} className={form.network === m ? 'seg-btn seg-on' : 'seg-btn'}>
                <input type="radio" name="network" className="offscreen" checked={form.network === m} onChange={() => set('network', m)} />
                {m === 'pod' ? 'Pod (CNI)' : 'Host'}
              </label>
            ))}
          </div>
        </div>
        <Field label="Hostname" error={errors.hostname} hint={hostnameHint(form)}>
          {(p) => (
            <TextInput
              p={{ ...p, 'data-testid': 'hostname' }}
              value={form.hostname}
              placeholder={form.network === 'host' ? "the host's (shared)" : "the host's hostname"}
              onChange={(v) => set('hostname', v)}
            />
          )}
        </Field>
        <AdvancedNetworkFields form={form} set={set} />
      </div>
    </fieldset>
  );
}

function AdvancedNetworkFields({ form, set }: Pick<SectionProps, 'form' | 'set'>) {
  return (
    <>
      <Field label="IP preference" hint="which eth0 address becomes the pod IP">
        {(p) => (
          <select
            {...p}
            className="input"
            value={form.ipPreference}
            onChange={(e) => set('ipPreference', e.target.value as FormState['ipPreference'])}
          >
            <option value="">engine default</option>
            {IP_PREFERENCES.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Runtime handler" hint="the OCI runtime of the pod's containers (CRI runtime_handler)">
        {(p) => (
          <select {...p} className="input" value={form.runtimeHandler} onChange={(e) => set('runtimeHandler', e.target.value)}>
            <option value="">engine default (runc)</option>
            {RUNTIME_HANDLER_CHOICES.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Cgroup parent">
        {(p) => <TextInput p={p} value={form.cgroupParent} placeholder="(none)" onChange={(v) => set('cgroupParent', v)} />}
      </Field>
    </>
  );
}

export function PortsAndBandwidthSections({ form, set, errors, locked }: SectionProps) {
  const host = form.network === 'host';
  return (
    <>
      <fieldset className="form-section" disabled={locked || host}>
        <legend>Port mappings {host && <span className="muted small">— not used with host network</span>}</legend>
        <PortMappingsEditor rows={form.ports} errors={errors} onChange={(rows) => set('ports', rows)} />
      </fieldset>
      <fieldset className="form-section" disabled={locked || host}>
        <legend>Bandwidth</legend>
        <div className="form-grid form-grid-2">
          <BandwidthField
            dir="ingress"
            annotation={INGRESS_ANNOTATION}
            value={form.ingress}
            error={errors.ingress}
            onChange={(v) => set('ingress', v)}
          />
          <BandwidthField
            dir="egress"
            annotation={EGRESS_ANNOTATION}
            value={form.egress}
            error={errors.egress}
            onChange={(v) => set('egress', v)}
          />
        </div>
        <div className="field-hint">
          Kubernetes quantities in bits per second, rounded up; allowed range 1k to 1P (containerd's limits).
        </div>
      </fieldset>
    </>
  );
}
