/** The sections of "Add container": what runs (name, image, pull), the process, declared ports and resources. */
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { Field } from '../../../../lib/ui/Field';
import { KeyValueEditor } from '../../../../lib/ui/KeyValueEditor';
import { PullProgress } from '../../../../lib/use-image-pull';
import type { ContainerFormModel } from '../api/use-container-form';
import { newEnvRow } from '../model/container-form';

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

export function ImageSection({ m }: { m: ContainerFormModel }) {
  const { form, set, visible, images } = m;
  const { pull } = images;
  const image = form.image.trim();
  const hint =
    image === '' ? (
      'a reference (busybox, 127.0.0.1:5000/busybox:1) or an image id'
    ) : images.present ? (
      <span className="text-ok">present on this endpoint</span>
    ) : images.listed ? (
      'not on this endpoint yet: pull it (creating without it fails with NotFound, as CRI does)'
    ) : undefined;
  return (
    <fieldset className="form-section">
      <legend>Container</legend>
      <div className="form-grid form-grid-2">
        <TextField label="Name" error={visible.name} placeholder="web" value={form.name} onChange={(v) => set('name', v)} />
        <Field label="Image" error={visible.image} hint={hint}>
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
                {[...images.known]
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
      <PullProgress progress={images.progress} pending={pull.isPending} />
      {pull.isError && <ErrorView error={pull.error} title={`Could not pull ${image}`} />}
      {pull.isSuccess && !pull.isPending && (
        <div className="small text-ok" role="status">
          Pulled {pull.data.repoTags[0] ?? pull.data.id}
        </div>
      )}
    </fieldset>
  );
}

export function ProcessSection({ m, pod }: { m: ContainerFormModel; pod: SandboxStatus }) {
  const { form, set, visible } = m;
  const logDir = pod.config.log_directory;
  return (
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
        <TextField label="Working directory" placeholder="image default" value={form.workingDir} onChange={(v) => set('workingDir', v)} />
        <TextField
          label="Log path"
          error={visible.logPath}
          hint={`relative to the pod's log directory${logDir ? ` (${logDir})` : ' — this pod has none, so no log is kept'}`}
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
      <KeyValueEditor
        rows={form.env}
        onChange={(rows) => set('env', rows)}
        newRow={newEnvRow}
        errors={visible}
        errorPrefix="env"
        noun="env"
        keyWord="name"
        keyPlaceholder="NAME"
        addLabel="+ Add variable"
        testId="env-rows"
      />
    </fieldset>
  );
}

export function ResourcesSection({ m }: { m: ContainerFormModel }) {
  const { form, set, visible } = m;
  return (
    <fieldset className="form-section">
      <legend>Ports and resources</legend>
      <div className="form-grid form-grid-2">
        <TextField
          label="Container ports"
          error={visible.ports}
          hint="declared, as kubelet records them (annotation io.kubernetes.container.ports); host ports are the pod's"
          placeholder="80, 53/udp"
          value={form.ports}
          onChange={(v) => set('ports', v)}
        />
        <TextField
          label="CPU limit (cores)"
          error={visible.cpus}
          hint="quota over a 100 ms CFS period"
          inputMode="decimal"
          placeholder="unlimited"
          value={form.cpus}
          onChange={(v) => set('cpus', v)}
        />
        <TextField
          label="Memory limit (MiB)"
          error={visible.memoryMiB}
          inputMode="decimal"
          placeholder="unlimited"
          value={form.memoryMiB}
          onChange={(v) => set('memoryMiB', v)}
        />
        <TextField
          label="CPU shares"
          error={visible.cpuShares}
          hint="relative weight, 2-262144"
          inputMode="numeric"
          placeholder="runtime default"
          value={form.cpuShares}
          onChange={(v) => set('cpuShares', v)}
        />
      </div>
    </fieldset>
  );
}
