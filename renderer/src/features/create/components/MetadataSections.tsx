/** The pod's identity (metadata) and where its containers log. */
import { defaultLogDirectory, newUid } from '../model/form-state';
import { Field, TextInput } from './Field';
import type { SectionProps } from './section-props';

export function MetadataSection({ form, set, errors, locked }: SectionProps) {
  return (
    <fieldset className="form-section" disabled={locked}>
      <legend>Metadata</legend>
      <div className="form-grid">
        <Field label="Name" error={errors.name}>
          {/* the page's first field: where the focus goes when the page is chosen in the sidebar */}
          {(p) => <TextInput p={{ ...p, 'data-page-focus': true }} value={form.name} placeholder="web" onChange={(v) => set('name', v)} />}
        </Field>
        <Field label="Namespace" error={errors.namespace}>
          {(p) => <TextInput p={p} value={form.namespace} onChange={(v) => set('namespace', v)} />}
        </Field>
        <Field
          label="UID"
          error={errors.uid}
          hint={
            <button type="button" className="link" onClick={() => set('uid', newUid())}>
              generate another
            </button>
          }
          wide
        >
          {(p) => <TextInput p={p} value={form.uid} onChange={(v) => set('uid', v)} />}
        </Field>
        <Field label="Attempt" error={errors.attempt}>
          {(p) => (
            <input
              {...p}
              className="input mono"
              inputMode="numeric"
              value={form.attempt}
              onChange={(e) => set('attempt', e.target.value)}
            />
          )}
        </Field>
      </div>
    </fieldset>
  );
}

export function LogsSection({ form, set, errors, locked }: SectionProps) {
  const auto = form.logDirectory === undefined;
  const value = form.logDirectory ?? defaultLogDirectory(form);
  return (
    <fieldset className="form-section" disabled={locked}>
      <legend>Logs</legend>
      <div className="form-grid">
        <Field
          label="Log directory"
          error={errors.logDirectory}
          wide
          hint={
            auto ? (
              "kubelet's layout, following the namespace, name and uid; each container logs to a file under it"
            ) : value.trim() === '' ? (
              <>
                none: containers of this pod keep no log.{' '}
                <button type="button" className="link" onClick={() => set('logDirectory', undefined)}>
                  use kubelet&apos;s default
                </button>
              </>
            ) : (
              <button type="button" className="link" onClick={() => set('logDirectory', undefined)}>
                back to kubelet&apos;s default
              </button>
            )
          }
        >
          {(p) => <TextInput p={p} value={value} placeholder="(none: no container logs)" onChange={(v) => set('logDirectory', v)} />}
        </Field>
      </div>
    </fieldset>
  );
}
