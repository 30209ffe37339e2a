/** "Save into the conf dir", after the warning: the file name, and how the write is done. */
import { useState } from 'react';
import { LAB_SAVE_WARNING } from '../../../../../shared/domain/lab';
import { ConfirmDialog } from '../../../lib/ui/Dialog';

export function LabSaveDialog({
  open,
  networkName,
  onSave,
  onClose,
}: {
  open: boolean;
  networkName?: string;
  onSave: (fileName: string) => void;
  onClose: () => void;
}) {
  const [fileName, setFileName] = useState('');
  return (
    <ConfirmDialog
      open={open}
      title="Save into the conf dir"
      confirmLabel="Save"
      danger
      body={
        <div className="stack-s">
          <div className="callout callout-warn small">{LAB_SAVE_WARNING}</div>
          <label className="lab-field">
            file name{' '}
            <input
              className="input mono"
              placeholder={`${networkName ?? 'network'}.conflist`}
              value={fileName}
              onChange={(e) => setFileName(e.target.value)}
            />
          </label>
          <div className="small muted">
            Written atomically (temp file + rename); an existing file is kept as &lt;file&gt;.bak-&lt;time&gt;.
          </div>
        </div>
      }
      onConfirm={() => onSave(fileName)}
      onClose={onClose}
    />
  );
}
