/**
 * Paste or choose a JSON/YAML file and import it: the pod form's crictl pod config and Add container's crictl
 * container config. `onImport` parses and applies the text and returns the problems to show; none closes the dialog.
 */
import { useState } from 'react';
import { Dialog } from './Dialog';

export function TextImportDialog({
  open,
  onClose,
  title,
  label,
  hint,
  placeholder,
  onImport,
}: {
  open: boolean;
  onClose: () => void;
  title: string;
  /** the textarea's accessible name */
  label: string;
  hint: React.ReactNode;
  placeholder: string;
  onImport: (text: string) => string[];
}) {
  const [text, setText] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const submit = () => {
    const problems = onImport(text);
    setErrors(problems);
    if (problems.length === 0) {
      setText('');
      onClose();
    }
  };
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title={title}
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
      <p className="small muted">{hint}</p>
      <textarea
        className="input mono import-text"
        aria-label={label}
        spellCheck={false}
        value={text}
        placeholder={placeholder}
        onChange={(e) => setText(e.target.value)}
      />
      {errors.length > 0 && (
        <div className="callout callout-bad" role="alert">
          {errors.map((e) => (
            <div key={e}>{e}</div>
          ))}
        </div>
      )}
    </Dialog>
  );
}
