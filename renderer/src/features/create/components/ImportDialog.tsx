import { useState } from 'react';
import { Dialog } from '../../../lib/ui/Dialog';
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
  const [text, setText] = useState('');
  const [result, setResult] = useState<ImportResult>();
  const submit = () => {
    const r = importCrictl(text);
    setResult(r);
    if (r.config && r.errors.length === 0) {
      onImport({ ...r, config: r.config });
      setText('');
      setResult(undefined);
    }
  };
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title="Import a crictl pod config"
      footer={
        <>
          <label className="btn">
            Choose file…
            <input
              type="file"
              accept=".json,.yaml,.yml,application/json,text/yaml"
              className="offscreen"
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (f) void f.text().then(setText);
              }}
            />
          </label>
          <span className="toolbar-spacer" />
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" disabled={!text.trim()} onClick={submit}>
            Import
          </button>
        </>
      }
    >
      <p className="small muted">
        JSON or YAML as given to <span className="mono">crictl runp</span>: snake_case keys (<span className="mono">port_mappings</span>,{' '}
        <span className="mono">dns_config</span>), enums as numbers.
      </p>
      <textarea
        className="input mono import-text"
        aria-label="crictl pod config"
        spellCheck={false}
        value={text}
        placeholder={
          '{\n  "metadata": {"name": "web", "namespace": "default"},\n  "port_mappings": [{"protocol": 0, "container_port": 80, "host_port": 8080}]\n}'
        }
        onChange={(e) => setText(e.target.value)}
      />
      {result?.errors.length ? (
        <div className="callout callout-bad" role="alert">
          {result.errors.map((e) => (
            <div key={e}>{e}</div>
          ))}
        </div>
      ) : null}
    </Dialog>
  );
}
