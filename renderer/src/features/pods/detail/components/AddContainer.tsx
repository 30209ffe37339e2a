/**
 * "Add container": image (pulled here, with progress, when the endpoint lacks it), command, args, env, declared ports
 * and resources, with the crictl container config it amounts to previewed live, and JSON/YAML import and export of
 * that file (the format `crictl create` takes). Creating runs CreateContainer then StartContainer in this pod.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { exportContainerConfig, importContainerConfig } from '../../../../../../shared/domain/crictl-container-format';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { useClient } from '../../../../lib/connection-context';
import { download } from '../../../../lib/download';
import { useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { TextImportDialog } from '../../../../lib/ui/TextImportDialog';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { Field } from '../../../../lib/ui/Field';
import { JsonView } from '../../../../lib/ui/JsonView';
import { Segmented } from '../../../../lib/ui/Segmented';
import { PullProgress, useImagePull } from '../../../../lib/use-image-pull';
import {
  emptyContainerForm,
  fromContainerConfig,
  newEnvRow,
  toContainerConfig,
  type ContainerForm,
  type EnvRow,
} from '../model/container-form';

/** a one-line monospace input in a labelled Field (most of this form) */
function TextField({
  value,
  onChange,
  placeholder,
  inputMode,
  ...field
}: {
  label: string;
  hint?: React.ReactNode;
  error?: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  inputMode?: 'decimal' | 'numeric';
}) {
  return (
    <Field {...field}>
      {(p) => (
        <input
          {...p}
          className="input mono"
          inputMode={inputMode}
          placeholder={placeholder}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

function EnvEditor({
  rows,
  errors,
  onChange,
}: {
  rows: EnvRow[];
  errors: Partial<Record<string, string>>;
  onChange: (rows: EnvRow[]) => void;
}) {
  const update = (key: string, patch: Partial<EnvRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <div className="rows" data-testid="env-rows">
      {rows.map((r, i) => (
        <div key={r.key} className="row-block">
          <div className="kv-grid">
            <input
              className="input mono"
              aria-label={`env ${i + 1} name`}
              aria-invalid={!!errors[`env.${r.key}`]}
              placeholder="NAME"
              value={r.k}
              onChange={(e) => update(r.key, { k: e.target.value })}
            />
            <input
              className="input mono"
              aria-label={`env ${i + 1} value`}
              placeholder="value"
              value={r.v}
              onChange={(e) => update(r.key, { v: e.target.value })}
            />
            <button
              type="button"
              className="btn btn-icon"
              aria-label={`Remove env ${i + 1}`}
              onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
            >
              ×
            </button>
          </div>
          {errors[`env.${r.key}`] && (
            <div className="field-error" role="alert">
              {errors[`env.${r.key}`]}
            </div>
          )}
        </div>
      ))}
      <button type="button" className="btn btn-small" onClick={() => onChange([...rows, newEnvRow()])}>
        + Add variable
      </button>
    </div>
  );
}

export function AddContainer({ pod, onDone }: { pod: SandboxStatus; onDone: (createdId?: string) => void }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const qc = useQueryClient();
  const [form, setForm] = useState<ContainerForm>(emptyContainerForm);
  const [touched, setTouched] = useState(false);
  const [previewFormat, setPreviewFormat] = useState<'json' | 'yaml'>('json');
  const [importOpen, setImportOpen] = useState(false);
  const [notice, setNotice] = useState<string[]>();
  const set = <K extends keyof ContainerForm>(k: K, v: ContainerForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  const images = useQuery({
    queryKey: ['ep', endpointId, 'images'],
    queryFn: () => client.call('images.list', { endpointId }),
    enabled: caps.images !== false,
  });
  const known = useMemo(() => new Set((images.data ?? []).flatMap((i) => [...i.repoTags, i.id])), [images.data]);
  const { pull, progress } = useImagePull(endpointId, () => void qc.invalidateQueries({ queryKey: ['ep', endpointId, 'images'] }));
  const image = form.image.trim();
  const haveImage =
    image !== '' &&
    (known.has(image) || [...known].some((t) => t.endsWith(`/${image}`) || t.endsWith(`/${image}:latest`) || t === `${image}:latest`));

  const { config, errors } = useMemo(() => toContainerConfig(form), [form]);
  const shown = touched ? errors : {};
  const text = useMemo(() => exportContainerConfig(config, previewFormat), [config, previewFormat]);
  const hasErrors = Object.keys(errors).length > 0;

  const create = useMutation({
    mutationFn: () => client.call('containers.create', { endpointId, podSandboxId: pod.id, config }),
    onSuccess: (r) => {
      void qc.invalidateQueries({ queryKey: ['ep', endpointId, 'containers'] });
      onDone(r.id);
    },
  });

  return (
    <div className="create-page add-container">
      <form
        className="create-form"
        aria-label="Add container"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setTouched(true);
          if (!hasErrors) create.mutate();
        }}
      >
        <div className="form-bar">
          <strong>
            Add a container to {pod.metadata.namespace}/{pod.metadata.name}
          </strong>
          <span className="toolbar-spacer" />
          <button type="button" className="btn" onClick={() => setImportOpen(true)}>
            Import…
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => download(`${form.name || 'container'}.json`, exportContainerConfig(config, 'json'), 'application/json')}
          >
            Export JSON
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => download(`${form.name || 'container'}.yaml`, exportContainerConfig(config, 'yaml'), 'text/yaml')}
          >
            Export YAML
          </button>
          <button type="button" className="btn btn-ghost" onClick={() => onDone()}>
            Cancel
          </button>
        </div>
        {notice && (
          <div className="callout callout-warn form-notice" role="status" data-testid="import-notice">
            <div className="callout-title">Imported. Not shown in the form (kept out of the config):</div>
            <ul className="warn-list">
              {notice.map((w) => (
                <li key={w} className="mono">
                  {w}
                </li>
              ))}
            </ul>
          </div>
        )}
        <fieldset className="form-section">
          <legend>Container</legend>
          <div className="form-grid form-grid-2">
            <Field label="Name" error={shown.name}>
              {(p) => (
                <input {...p} className="input mono" placeholder="web" value={form.name} onChange={(e) => set('name', e.target.value)} />
              )}
            </Field>
            <Field
              label="Image"
              error={shown.image}
              hint={
                image === '' ? (
                  'a reference (busybox, 127.0.0.1:5000/busybox:1) or an image id'
                ) : haveImage ? (
                  <span className="text-ok">present on this endpoint</span>
                ) : images.data ? (
                  'not on this endpoint yet: pull it (creating without it fails with NotFound, as CRI does)'
                ) : undefined
              }
            >
              {(p) => (
                <div className="input-row">
                  <input
                    {...p}
                    className="input mono"
                    list="known-images"
                    placeholder="busybox"
                    value={form.image}
                    onChange={(e) => set('image', e.target.value)}
                  />
                  <datalist id="known-images">
                    {[...known]
                      .filter((t) => !t.startsWith('sha256:'))
                      .map((t) => (
                        <option key={t} value={t} />
                      ))}
                  </datalist>
                  <button type="button" className="btn" disabled={!image || pull.isPending} onClick={() => pull.mutate(image)}>
                    Pull
                  </button>
                </div>
              )}
            </Field>
          </div>
          <PullProgress progress={progress} pending={pull.isPending} />
          {pull.isError && <ErrorView error={pull.error} title={`Could not pull ${image}`} />}
          {pull.isSuccess && !pull.isPending && (
            <div className="small text-ok" role="status">
              Pulled {pull.data.repoTags[0] ?? pull.data.id}
            </div>
          )}
        </fieldset>
        <fieldset className="form-section">
          <legend>Process</legend>
          <div className="form-grid form-grid-2">
            <TextField
              label="Command"
              hint="replaces the image's ENTRYPOINT; empty: the image's"
              placeholder="/bin/sh -c"
              value={form.command}
              onChange={(v) => set('command', v)}
            />
            <TextField
              label="Arguments"
              hint="replaces the image's CMD; quote words with spaces"
              placeholder={'"while true; do date; sleep 1; done"'}
              value={form.args}
              onChange={(v) => set('args', v)}
            />
            <TextField
              label="Working directory"
              placeholder="image default"
              value={form.workingDir}
              onChange={(v) => set('workingDir', v)}
            />
            <TextField
              label="Log path"
              hint={`relative to the pod's log directory${pod.config.log_directory ? ` (${pod.config.log_directory})` : ' — this pod has none, so no log is kept'}`}
              placeholder={form.name ? `${form.name.trim()}_0.log` : 'name_0.log'}
              value={form.logPath}
              onChange={(v) => set('logPath', v)}
            />
          </div>
          <div className="form-row">
            <label className="check">
              <input type="checkbox" checked={form.stdin} onChange={(e) => set('stdin', e.target.checked)} /> keep stdin open (for attach)
            </label>
            <label className="check">
              <input type="checkbox" checked={form.tty} onChange={(e) => set('tty', e.target.checked)} /> tty
            </label>
          </div>
          <div className="label">Environment</div>
          <EnvEditor rows={form.env} errors={shown} onChange={(rows) => set('env', rows)} />
        </fieldset>
        <fieldset className="form-section">
          <legend>Ports and resources</legend>
          <div className="form-grid form-grid-2">
            <TextField
              label="Container ports"
              error={shown.ports}
              hint="declared, as kubelet records them (annotation io.kubernetes.container.ports); host ports are the pod's"
              placeholder="80, 53/udp"
              value={form.ports}
              onChange={(v) => set('ports', v)}
            />
            <TextField
              label="CPU limit (cores)"
              error={shown.cpus}
              hint="quota over a 100 ms CFS period"
              inputMode="decimal"
              placeholder="unlimited"
              value={form.cpus}
              onChange={(v) => set('cpus', v)}
            />
            <TextField
              label="Memory limit (MiB)"
              error={shown.memoryMiB}
              inputMode="decimal"
              placeholder="unlimited"
              value={form.memoryMiB}
              onChange={(v) => set('memoryMiB', v)}
            />
            <TextField
              label="CPU shares"
              error={shown.cpuShares}
              hint="relative weight, 2-262144"
              inputMode="numeric"
              placeholder="runtime default"
              value={form.cpuShares}
              onChange={(v) => set('cpuShares', v)}
            />
          </div>
        </fieldset>
        {shown.form && (
          <div className="callout callout-bad" role="alert">
            {shown.form}
          </div>
        )}
        {create.isError && <ErrorView error={create.error} title="The container could not be created" />}
        <div className="form-submit">
          <button type="submit" className="btn btn-primary btn-large" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create and start'}
          </button>
          {touched && hasErrors && (
            <span className="text-bad" role="alert">
              {Object.keys(errors).length} field{Object.keys(errors).length === 1 ? '' : 's'} to fix
            </span>
          )}
        </div>
      </form>
      <aside className="preview" aria-label="Preview">
        <div className="preview-head">
          <Segmented
            label="Preview format"
            segments={[
              { id: 'json', label: 'crictl JSON' },
              { id: 'yaml', label: 'crictl YAML' },
            ]}
            value={previewFormat}
            onChange={setPreviewFormat}
          />
          <span className="toolbar-spacer" />
          <CopyButton text={text} />
        </div>
        <p className="small muted">
          The container config as <span className="mono">crictl create POD container.{previewFormat} pod.json</span> takes it.
        </p>
        {previewFormat === 'json' ? (
          <div data-testid="container-preview">
            <JsonView value={JSON.parse(text) as unknown} />
          </div>
        ) : (
          <pre className="code" data-testid="container-preview">
            {text}
          </pre>
        )}
      </aside>
      <TextImportDialog
        open={importOpen}
        onClose={() => setImportOpen(false)}
        title="Import a crictl container config"
        label="crictl container config"
        hint="JSON or YAML as given to crictl create: snake_case keys, enums as numbers."
        placeholder={'{\n  "metadata": {"name": "web"},\n  "image": {"image": "busybox"},\n  "command": ["httpd", "-f", "-p", "80"]\n}'}
        onImport={(text) => {
          const r = importContainerConfig(text);
          if (!r.config) return r.errors;
          const { form: next, dropped } = fromContainerConfig(r.config);
          setForm(next);
          setNotice(dropped.length || r.warnings.length ? [...r.warnings, ...dropped] : undefined);
          return [];
        }}
      />
    </div>
  );
}
