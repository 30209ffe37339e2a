/**
 * Live preview: the crictl file the form amounts to, and what runtimeConfig each plugin of the loaded conflist
 * would receive (asked of the engine through the preview channel, so it is the engine's answer, not a guess).
 */
import { useState } from 'react';
import type { ConfigPreview } from '../../../../../shared/domain/sandbox';
import { CopyButton } from '../../../lib/ui/CopyButton';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { JsonView } from '../../../lib/ui/JsonView';
import { NotAvailable } from '../../../lib/ui/EmptyState';
import { Pill } from '../../../lib/ui/StatusPill';
import { HostPortConflictWarning } from './HostPortConflictWarning';
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
      {tab === 'plugins' &&
        (!available ? (
          <NotAvailable what="runtimeConfig preview" />
        ) : localErrors > 0 ? (
          <div className="muted pad">
            Fix the {localErrors} highlighted field{localErrors > 1 ? 's' : ''} to see what each plugin would receive.
          </div>
        ) : previewError ? (
          <ErrorView error={previewError} title="Preview failed" />
        ) : !preview ? (
          <div className="muted pad">Computing…</div>
        ) : (
          <div className="stack-s" data-testid="preview-plugins">
            {preview.errors.map((e) => (
              <div key={e} className="callout callout-bad" data-testid="preview-error">
                {e}
              </div>
            ))}
            {preview.hostNetwork ? (
              <div className="callout">Host network: no CNI plugin is called, no port mapping or bandwidth applies.</div>
            ) : preview.plugins.length === 0 ? (
              <div className="callout callout-warn">No CNI network is loaded: the run would fail with "cni plugin not initialized".</div>
            ) : (
              preview.plugins.map((p) => (
                <div
                  key={`${p.network}-${p.index}`}
                  className={p.binaryFound === false ? 'plugin-preview plugin-preview-missing' : 'plugin-preview'}
                  data-plugin={p.type}
                >
                  <div className="plugin-preview-head">
                    <span className="mono tl-plugin">{p.type}</span>
                    {p.binaryFound === false && <Pill tone="bad">binary not found</Pill>}
                    <span className="mono muted">
                      {p.network}/{p.ifName} #{p.index}
                    </span>
                    <span className="toolbar-spacer" />
                    {p.capabilities.length ? (
                      p.capabilities.map((c) => (
                        <Pill key={c} tone="info">
                          {c}
                        </Pill>
                      ))
                    ) : (
                      <span className="muted small">no capabilities</span>
                    )}
                  </div>
                  {p.runtimeConfig ? (
                    <JsonView value={{ runtimeConfig: p.runtimeConfig }} highlightKey="runtimeConfig" />
                  ) : (
                    <div className="muted small pad-s">receives no runtimeConfig</div>
                  )}
                </div>
              ))
            )}
            {preview.portMappings.some((d) => !d.passed) && (
              <div className="callout callout-warn">
                {preview.portMappings
                  .filter((d) => !d.passed)
                  .map((d) => (
                    <div key={d.index}>
                      port mapping #{d.index} ({d.mapping.container_port}): {d.reason}
                    </div>
                  ))}
              </div>
            )}
            <div className="small muted">
              CNI_ARGS <span className="mono wrap-anywhere">{preview.cniArgs.map(([k, v]) => `${k}=${v}`).join(';')}</span>
            </div>
          </div>
        ))}
    </aside>
  );
}
