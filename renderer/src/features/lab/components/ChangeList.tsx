/**
 * Values a lab run changed in place (sysctls, host links), each as before → after with its owner plugin and, when it
 * stays changed by design, why. A change on the host without a reason outlives the run: it is marked like a leak.
 */
import type { LabKernelChange } from '../../../../../shared/domain/lab';
import { Pill } from '../../../lib/ui/StatusPill';

function subject(c: LabKernelChange): string {
  if (c.kind === 'sysctl') return c.subject;
  return `${c.subject} ${c.field}`;
}

/** `afterDel`: the changes are what DEL did not put back, so a host one without a reason is marked like a leak */
export function ChangeList({ changes, testId, afterDel = false }: { changes: LabKernelChange[]; testId: string; afterDel?: boolean }) {
  if (changes.length === 0) return <div className="muted small">nothing</div>;
  return (
    <table className="table lab-kernel" data-testid={testId}>
      <tbody>
        {changes.map((c, n) => {
          const leak = afterDel && c.where === 'host' && !c.why;
          return (
            <tr key={n} data-testid="lab-change" className={leak ? 'lab-change-leak' : undefined}>
              <td>
                <Pill tone={c.where === 'host' ? (leak ? 'bad' : afterDel ? 'warn' : 'info') : 'muted'}>
                  {c.where === 'host' ? 'host' : 'run netns'}
                </Pill>
              </td>
              <td className="mono muted small">{c.kind === 'sysctl' ? 'sysctl' : 'link'}</td>
              <td className="mono small">{subject(c)}</td>
              <td className="mono small lab-change-values">
                <span title={c.beforeFrom ? `before: ${c.beforeFrom}, the value a new interface starts from` : 'before'}>
                  {c.before ?? '(absent)'}
                  {c.beforeFrom ? ' (default)' : ''}
                </span>
                {' → '}
                <b>{c.after ?? '(absent)'}</b>
              </td>
              <td className="small muted">{c.owner ? `by ${c.owner}` : ''}</td>
              <td className="small muted">{c.why ?? (c.where === 'netns' ? "in the run's netns, removed with it" : '')}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
