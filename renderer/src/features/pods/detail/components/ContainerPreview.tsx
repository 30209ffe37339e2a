/** The container config "Add container" amounts to, as `crictl create` takes it, in JSON or YAML. */
import { useState } from 'react';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { JsonView } from '../../../../lib/ui/JsonView';
import { Segmented } from '../../../../lib/ui/Segmented';

export function ContainerPreview({ exportAs }: { exportAs: (format: 'json' | 'yaml') => string }) {
  const [format, setFormat] = useState<'json' | 'yaml'>('json');
  const text = exportAs(format);
  return (
    <aside className="preview" aria-label="Preview">
      <div className="preview-head">
        <Segmented
          label="Preview format"
          segments={[
            { id: 'json', label: 'crictl JSON' },
            { id: 'yaml', label: 'crictl YAML' },
          ]}
          value={format}
          onChange={setFormat}
        />
        <span className="toolbar-spacer" />
        <CopyButton text={text} />
      </div>
      <p className="small muted">
        The container config as <span className="mono">crictl create POD container.{format} pod.json</span> takes it.
      </p>
      {format === 'json' ? (
        <div data-testid="container-preview">
          <JsonView value={JSON.parse(text) as unknown} />
        </div>
      ) : (
        <pre className="code" data-testid="container-preview">
          {text}
        </pre>
      )}
    </aside>
  );
}
