/**
 * Live preview: the crictl file the form amounts to, and what runtimeConfig each plugin of the loaded conflist
 * would receive (asked of the engine through the preview channel, so it is the engine's answer, not a guess).
 */
import { useState } from 'react';
import type { ConfigPreview } from '../../../../../shared/domain/sandbox';
import { CopyButton } from '../../../lib/ui/CopyButton';
import { JsonView } from '../../../lib/ui/JsonView';
import { HostPortConflictWarning } from './HostPortConflictWarning';
import { PluginsPreview } from './PluginsPreview';
import { Segmented } from '../../../lib/ui/Segmented';

export function PreviewPanel({
  crictlJson,
  crictlYaml,
  preview,
  previewError,
  fetching,
  available,
  localErrors,
  logDirectory,
}: {
  crictlJson: string;
  crictlYaml: string;
  preview?: ConfigPreview;
  previewError: unknown;
  fetching: boolean;
  available: boolean;
  localErrors: number;
  /** the pod's log_directory ('' when none) */
  logDirectory: string;
}) {
  const [tab, setTab] = useState<'plugins' | 'json' | 'yaml'>('plugins');
  return (
    <aside className="preview" aria-label="Preview">
      <div className="preview-head">
        <Segmented
          label="Preview"
          segments={[
            { id: 'plugins', label: 'Plugin runtimeConfig' },
            { id: 'json', label: 'crictl JSON' },
            { id: 'yaml', label: 'YAML' },
          ]}
          value={tab}
          onChange={setTab}
        />
        {fetching && <span className="muted small">updating…</span>}
      </div>
      <div className={logDirectory ? 'small muted' : 'small text-warn'} data-testid="preview-logs">
        {logDirectory ? (
          <>
            container logs: <span className="mono">{logDirectory}/</span>
            <span className="mono">&lt;log_path&gt;</span>
          </>
        ) : (
          'no log_directory: containers of this pod keep no log'
        )}
      </div>
      {available && <HostPortConflictWarning conflicts={preview?.hostPortConflicts} />}
      {tab === 'json' && (
        <div data-testid="preview-json">
          <div className="preview-tools">
            <span className="muted small">crictl runp pod.json</span>
            <CopyButton text={crictlJson} />
          </div>
          <JsonView value={crictlJson} />
        </div>
      )}
      {tab === 'yaml' && (
        <div>
          <div className="preview-tools">
            <span className="muted small">crictl runp pod.yaml</span>
            <CopyButton text={crictlYaml} />
          </div>
          <pre className="code">{crictlYaml}</pre>
        </div>
      )}
      {tab === 'plugins' && (
        <PluginsPreview preview={preview} previewError={previewError} available={available} localErrors={localErrors} />
      )}
    </aside>
  );
}
