/**
 * The conflist editor: CodeMirror 6 with JSON highlighting and the engine's validation issues underlined at their
 * positions (CodeEditor.tsx, loaded lazily so the editor's weight stays out of the app's first chunk), and the issues
 * listed under it, each a button that selects its range in the editor.
 */
import { lazy, Suspense, useState } from 'react';
import type { LabIssue } from '../../../../../shared/domain/lab';
import { issueRange } from '../editor-ranges';

const CodeEditor = lazy(() => import('./CodeEditor'));

export function ConflistEditor({ value, onChange, issues }: { value: string; onChange: (v: string) => void; issues: LabIssue[] }) {
  const [focusAt, setFocusAt] = useState<{ from: number; to: number; n: number }>();
  const jump = (i: LabIssue) => {
    const r = issueRange(value, i);
    if (r) setFocusAt({ ...r, n: (focusAt?.n ?? 0) + 1 });
  };
  return (
    <div className="lab-editor-wrap">
      <div className="lab-editor">
        <Suspense fallback={<div className="lab-editor-loading muted small">Loading editor…</div>}>
          <CodeEditor value={value} onChange={onChange} issues={issues} focusAt={focusAt} label="Conflist" />
        </Suspense>
      </div>
      {issues.length > 0 && (
        <ul className="lab-issues" data-testid="lab-issues">
          {issues.map((i, n) => (
            <li key={n}>
              {i.offset !== undefined ? (
                <button type="button" className="link" onClick={() => jump(i)}>
                  {i.line !== undefined ? `line ${i.line}, column ${i.column}` : 'document'}
                </button>
              ) : (
                <span className="muted">{i.line !== undefined ? `line ${i.line}, column ${i.column}` : 'document'}</span>
              )}{' '}
              {i.path && <span className="mono">{i.path}: </span>}
              {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
