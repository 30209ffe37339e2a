/** The pod's DNS config (one entry per line, or separated by commas or spaces) and its labels and annotations. */
import { KeyValueEditor } from '../../../lib/ui/KeyValueEditor';
import { newKvRow, type FormState } from '../model/form-state';
import { Field } from './Field';
import type { SectionProps } from './section-props';

const DNS_FIELDS: Array<{ key: 'dnsServers' | 'dnsSearches' | 'dnsOptions'; label: string; placeholder: string }> = [
  { key: 'dnsServers', label: 'Servers', placeholder: '10.96.0.10' },
  { key: 'dnsSearches', label: 'Searches', placeholder: 'svc.cluster.local' },
  { key: 'dnsOptions', label: 'Options', placeholder: 'ndots:5' },
];

export function DnsSection({ form, set, errors, locked }: SectionProps) {
  return (
    <fieldset className="form-section" disabled={locked}>
      <legend>DNS</legend>
      <div className="form-grid form-grid-3">
        {DNS_FIELDS.map((f) => (
          <Field key={f.key} label={f.label} error={errors[f.key]}>
            {(p) => (
              <textarea
                {...p}
                className="input mono"
                rows={2}
                value={form[f.key]}
                placeholder={f.placeholder}
                onChange={(e) => set(f.key, e.target.value)}
              />
            )}
          </Field>
        ))}
      </div>
    </fieldset>
  );
}

const MAPS: Array<{ key: 'labels' | 'annotations'; title: string; noun: string; keyPlaceholder: string }> = [
  { key: 'labels', title: 'Labels', noun: 'label', keyPlaceholder: 'app' },
  { key: 'annotations', title: 'Annotations', noun: 'annotation', keyPlaceholder: 'example.com/key' },
];

export function LabelsSection({ form, set, errors, locked }: SectionProps) {
  return (
    <fieldset className="form-section" disabled={locked}>
      <legend>Labels and annotations</legend>
      <div className="form-grid form-grid-2">
        {MAPS.map((m) => (
          <div key={m.key}>
            <div className="label">{m.title}</div>
            <KeyValueEditor
              rows={form[m.key]}
              onChange={(rows) => set(m.key, rows as FormState[typeof m.key])}
              newRow={newKvRow}
              errors={errors}
              errorPrefix={m.key}
              noun={m.noun}
              keyPlaceholder={m.keyPlaceholder}
              addLabel={`+ Add ${m.noun}`}
              testId={`${m.key}-rows`}
            />
          </div>
        ))}
      </div>
    </fieldset>
  );
}
