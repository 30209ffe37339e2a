/**
 * "Add container": image (pulled here, with progress, when the endpoint lacks it), command, args, env, declared ports
 * and resources, validated as they are typed, with the crictl container config it amounts to previewed live, and
 * JSON/YAML import and export of that file (the format `crictl create` takes). Creating runs CreateContainer then
 * StartContainer in this pod. The state and calls are the model hook's (api/use-container-form).
 */
import { useState } from 'react';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { download } from '../../../../lib/download';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { TextImportDialog } from '../../../../lib/ui/TextImportDialog';
import { useContainerForm, type ContainerFormModel } from '../api/use-container-form';
import { ContainerPreview } from './ContainerPreview';
import { ImageSection, ProcessSection, ResourcesSection } from './ContainerFormSections';

function FormBar({
  m,
  pod,
  onImport,
  onCancel,
}: {
  m: ContainerFormModel;
  pod: SandboxStatus;
  onImport: () => void;
  onCancel: () => void;
}) {
  const name = m.form.name || 'container';
  return (
    <div className="form-bar">
      <strong>
        Add a container to {pod.metadata.namespace}/{pod.metadata.name}
      </strong>
      <span className="toolbar-spacer" />
      <button type="button" className="btn" onClick={onImport}>
        Import…
      </button>
      <button type="button" className="btn" onClick={() => download(`${name}.json`, m.exportAs('json'), 'application/json')}>
        Export JSON
      </button>
      <button type="button" className="btn" onClick={() => download(`${name}.yaml`, m.exportAs('yaml'), 'text/yaml')}>
        Export YAML
      </button>
      <button type="button" className="btn btn-ghost" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

function ImportNotice({ dropped }: { dropped: string[] }) {
  return (
    <div className="callout callout-warn form-notice" role="status" data-testid="import-notice">
      <div className="callout-title">Imported. Not shown in the form (kept out of the config):</div>
      <ul className="warn-list">
        {dropped.map((w) => (
          <li key={w} className="mono">
            {w}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function AddContainer({ pod, onDone }: { pod: SandboxStatus; onDone: (createdId?: string) => void }) {
  const m = useContainerForm(pod, onDone);
  const [importOpen, setImportOpen] = useState(false);
  const { create, visible } = m;
  return (
    <div className="create-page add-container">
      <form
        className="create-form"
        aria-label="Add container"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          m.submit();
        }}
      >
        <FormBar m={m} pod={pod} onImport={() => setImportOpen(true)} onCancel={() => onDone()} />
        {m.notice && <ImportNotice dropped={m.notice} />}
        <ImageSection m={m} />
        <ProcessSection m={m} pod={pod} />
        <ResourcesSection m={m} />
        {visible.form && (
          <div className="callout callout-bad" role="alert">
            {visible.form}
          </div>
        )}
        {create.isError && <ErrorView error={create.error} title="The container could not be created" />}
        <div className="form-submit">
          <button type="submit" className="btn btn-primary btn-large" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create and start'}
          </button>
          {m.submitted && m.errorCount > 0 && (
            <span className="text-bad" role="alert">
              {m.errorCount} field{m.errorCount === 1 ? '' : 's'} to fix
            </span>
          )}
        </div>
      </form>
      <ContainerPreview exportAs={m.exportAs} />
      <TextImportDialog
        open={importOpen}
        onClose={() => setImportOpen(false)}
        title="Import a crictl container config"
        label="crictl container config"
        hint="JSON or YAML as given to crictl create: snake_case keys, enums as numbers."
        placeholder={'{\n  "metadata": {"name": "web"},\n  "image": {"image": "busybox"},\n  "command": ["httpd", "-f", "-p", "80"]\n}'}
        onImport={m.importText}
      />
    </div>
  );
}
