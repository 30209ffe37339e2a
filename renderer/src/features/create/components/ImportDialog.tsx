import { TextImportDialog } from '../../../lib/ui/TextImportDialog';
import { importCrictl, type ImportResult } from '../model/crictl-io';

export function ImportDialog({
  open,
  onClose,
  onImport,
}: {
  open: boolean;
  onClose: () => void;
  onImport: (r: ImportResult & { config: NonNullable<ImportResult['config']> }) => void;
}) {
  return (
    <TextImportDialog
      open={open}
      onClose={onClose}
      title="Import a crictl pod config"
      label="crictl pod config"
      hint={
        <>
          JSON or YAML as given to <span className="mono">crictl runp</span>: snake_case keys (<span className="mono">port_mappings</span>,{' '}
          <span className="mono">dns_config</span>), enums as numbers.
        </>
      }
      placeholder={
        '{\n  "metadata": {"name": "web", "namespace": "default"},\n  "port_mappings": [{"protocol": 0, "container_port": 80, "host_port": 8080}]\n}'
      }
      onImport={(text) => {
        const r = importCrictl(text);
        if (r.config && r.errors.length === 0) onImport({ ...r, config: r.config });
        return r.errors;
      }}
    />
  );
}
