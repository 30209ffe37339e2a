/** Two runs (or a run and a live pod's ADD) side by side, per plugin: stdin, result, stderr, exit, duration, kernel. */
import type { LabDiff, LabValueChange } from '../../../../../shared/domain/lab';
import { ms } from '../../../lib/format';
import { Pill } from '../../../lib/ui/StatusPill';
import { KernelList } from './RunView';

const show = (v: unknown) => (v === undefined ? '—' : JSON.stringify(v));

function Changes({ title, changes }: { title: string; changes: LabValueChange[] }) {
  if (changes.length === 0) return null;
  return (
    <table className="table lab-diff-table">
      <thead>
        <tr>
          <th>{title}</th>
          <th>a</th>
          <th>b</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c, n) => (
          <tr key={n}>
            <td className="mono small">{c.path || '(whole)'}</td>
            <td className="mono small lab-diff-a">{show(c.a)}</td>
            <td className="mono small lab-diff-b">{show(c.b)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function DiffView({ diff }: { diff: LabDiff }) {
  return (
    <div className="stack" data-testid="lab-diff">
      <div className="lab-cols">
        <div>
          <Pill tone="bad">a</Pill> <span className="mono small">{diff.a.label}</span>
        </div>
        <div>
          <Pill tone="ok">b</Pill> <span className="mono small">{diff.b.label}</span>
        </div>
      </div>
      {diff.plugins.map((p, n) => (
        <section key={n} className="card">
          <header className="card-head">
            <Pill tone="info">{p.phase}</Pill>
            <span className="mono">
              <b>{p.type}</b>
            </span>
            <span className="mono muted small">#{p.index}</span>
            {p.present !== 'both' ? (
              <Pill tone="warn">only in {p.present}</Pill>
            ) : p.same ? (
              <Pill tone="muted">same</Pill>
            ) : (
              <Pill tone="warn">differs</Pill>
            )}
            <span className="toolbar-spacer" />
            <span className="mono muted small">
              {p.durationMs.a !== undefined ? ms(p.durationMs.a) : '—'} vs {p.durationMs.b !== undefined ? ms(p.durationMs.b) : '—'}
            </span>
          </header>
          <Changes title="stdin" changes={p.stdin} />
          <Changes title="result" changes={p.result} />
          {p.exitCode && (
            <div className="small mono">
              exit {p.exitCode.a ?? '—'} → {p.exitCode.b ?? '—'}
            </div>
          )}
          {p.stderr && (
            <div className="lab-cols">
              <pre className="code lab-diff-a">{p.stderr.a || '(empty)'}</pre>
              <pre className="code lab-diff-b">{p.stderr.b || '(empty)'}</pre>
            </div>
          )}
        </section>
      ))}
      <Changes title="final result" changes={diff.result} />
      {diff.kernel && (
        <section className="section">
          <div className="section-head">
            <strong>Kernel state created</strong>
          </div>
          <div className="lab-cols">
            <div>
              <div className="small muted">only in a</div>
              <KernelList items={diff.kernel.onlyA} empty="nothing" />
            </div>
            <div>
              <div className="small muted">only in b</div>
              <KernelList items={diff.kernel.onlyB} empty="nothing" />
            </div>
          </div>
          {diff.kernel.existedBefore && (
            <div data-testid="lab-diff-existed-before">
              <div className="small muted">created by one run, found already there by the other: not a difference</div>
              <KernelList items={diff.kernel.existedBefore} empty="" />
            </div>
          )}
        </section>
      )}
      {diff.leftAfterDel && (diff.leftAfterDel.onlyA.length > 0 || diff.leftAfterDel.onlyB.length > 0) && (
        <section className="section">
          <div className="section-head">
            <strong>Left after DEL</strong>
          </div>
          <div className="lab-cols">
            <KernelList items={diff.leftAfterDel.onlyA} empty="nothing" />
            <KernelList items={diff.leftAfterDel.onlyB} empty="nothing" />
          </div>
        </section>
      )}
      {diff.notes.map((n) => (
        <div key={n} className="muted small">
          {n}
        </div>
      ))}
    </div>
  );
}
