/** The runs kept under the state dir, each pickable as a or b of a comparison (b may also be a live pod's ADD). */
import type { EndpointView } from '../../../../../shared/domain/endpoints';
import type { LabRunSummary } from '../../../../../shared/domain/lab';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { dateTime, ms } from '../../../lib/format';
import { Pill } from '../../../lib/ui/StatusPill';

export function LabRuns({
  runs,
  pods,
  endpointPods = [],
  a,
  b,
  setA,
  setB,
  onShow,
}: {
  runs: LabRunSummary[];
  pods: SandboxSummary[];
  /** pods of the CRI endpoints this process measures: their ADD is read from libcni's cache */
  endpointPods?: Array<{ endpoint: EndpointView; pods: SandboxSummary[] }>;
  a: string;
  b: string;
  setA: (id: string) => void;
  setB: (id: string) => void;
  onShow: (id: string) => void;
}) {
  return (
    <section className="section">
      <div className="section-head">
        <strong>Runs</strong>
        <span className="muted small">kept under the state dir; pick a and b to compare</span>
      </div>
      <table className="table" data-testid="lab-runs">
        <thead>
          <tr>
            <th>a</th>
            <th>b</th>
            <th>run</th>
            <th>created</th>
            <th>network</th>
            <th>plugins</th>
            <th>result</th>
            <th>left</th>
            <th>time</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                <input type="radio" name="lab-a" aria-label={`a ${r.id}`} checked={a === r.id} onChange={() => setA(r.id)} />
              </td>
              <td>
                <input type="radio" name="lab-b" aria-label={`b ${r.id}`} checked={b === r.id} onChange={() => setB(r.id)} />
              </td>
              <td>
                <button type="button" className="link mono" onClick={() => onShow(r.id)}>
                  {r.id}
                </button>
              </td>
              <td className="small muted">{dateTime(r.createdAt)}</td>
              <td className="mono small">{r.name}</td>
              <td className="mono small">{r.pluginTypes.join(', ')}</td>
              <td>{r.success ? <Pill tone="ok">ok</Pill> : <Pill tone="bad">{r.addOk ? 'failed' : 'ADD failed'}</Pill>}</td>
              <td className="mono small">{r.leaked}</td>
              <td className="mono small muted">{ms(r.durationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {(pods.length > 0 || endpointPods.length > 0) && (
        <label className="small">
          or compare run a with a live pod&apos;s ADD as b:{' '}
          <select
            className="input"
            aria-label="b: a live pod's ADD"
            value={b.startsWith('sandbox:') || b.startsWith('endpoint:') ? b : ''}
            onChange={(e) => setB(e.target.value)}
          >
            <option value="">—</option>
            {pods.map((p) => (
              <option key={p.id} value={`sandbox:${p.id}`}>
                {p.name || p.id.slice(0, 13)}
              </option>
            ))}
            {endpointPods.map((g) => (
              // another runtime's pod: its ADD as libcni's cache keeps it (stdins and the final result)
              <optgroup key={g.endpoint.id} label={`${g.endpoint.label} (from libcni's cache)`}>
                {g.pods.map((p) => (
                  <option key={p.id} value={`endpoint:${g.endpoint.id}:${p.id}`}>
                    {p.name || p.id.slice(0, 13)}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </label>
      )}
    </section>
  );
}
