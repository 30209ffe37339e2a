/**
 * The conflist editor: a textarea with a line-number gutter that scrolls with it, the line of the first error marked
 * and the error written under the editor with its line and column. No code-editor library is installed; this keeps
 * the page dependency-free.
 */
import { useRef } from 'react';
import type { LabIssue } from '../../../../../shared/domain/lab';

export function ConflistEditor({ value, onChange, issues }: { value: string; onChange: (v: string) => void; issues: LabIssue[] }) {
  const gutter = useRef<HTMLDivElement>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const lines = value.split('\n').length;
  const bad = new Set(issues.filter((i) => i.line !== undefined).map((i) => i.line!));
  const jump = (i: LabIssue) => {
    const t = area.current;
    if (!t || i.offset === undefined) return;
    t.focus();
    t.setSelectionRange(i.offset, i.offset + 1);
  };
  return (
    <div className="lab-editor-wrap">
      <div className="lab-editor">
        <div className="lab-gutter mono" ref={gutter} aria-hidden="true">
          {Array.from({ length: lines }, (_, n) => (
            <div key={n} className={bad.has(n + 1) ? 'lab-gutter-line lab-gutter-bad' : 'lab-gutter-line'}>
              {n + 1}
            </div>
          ))}
        </div>
        <textarea
          ref={area}
          className="lab-textarea mono"
          aria-label="Conflist"
          spellCheck={false}
          value={value}
          wrap="off"
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      {issues.length > 0 && (
        <ul className="lab-issues" data-testid="lab-issues">
          {issues.map((i, n) => (
            <li key={n}>
              <button type="button" className="link" onClick={() => jump(i)}>
                {i.line !== undefined ? `line ${i.line}, column ${i.column}` : 'document'}
              </button>{' '}
              {i.path && <span className="mono">{i.path}: </span>}
              {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
