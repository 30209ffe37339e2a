/** What each plugin of the loaded conflist would receive, as the engine answers it; or why that cannot be shown yet. */
import type { ConfigPreview } from '../../../../../shared/domain/sandbox';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { JsonView } from '../../../lib/ui/JsonView';
import { NotAvailable } from '../../../lib/ui/EmptyState';
import { Pill } from '../../../lib/ui/StatusPill';

export function PluginsPreview({
  preview,
  previewError,
  available,
  localErrors,
}: {
  preview?: ConfigPreview;
  previewError: unknown;
  available: boolean;
  localErrors: number;
}) {
  if (!available) return <NotAvailable what="runtimeConfig preview" />;
  if (localErrors > 0)
    return (
      <div className="muted pad">
        Fix the {localErrors} highlighted field{localErrors > 1 ? 's' : ''} to see what each plugin would receive.
      </div>
    );
  if (previewError) return <ErrorView error={previewError} title="Preview failed" />;
  if (!preview) return <div className="muted pad">Computing…</div>;
  return (
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
        preview.plugins.map((p) => <PluginPreviewCard key={`${p.network}-${p.index}`} p={p} />)
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
  );
}

/** one plugin: its place in the chain, its capabilities and the runtimeConfig it would receive */
function PluginPreviewCard({ p }: { p: ConfigPreview['plugins'][number] }) {
  return (
    <div className={p.binaryFound === false ? 'plugin-preview plugin-preview-missing' : 'plugin-preview'} data-plugin={p.type}>
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
  );
}
