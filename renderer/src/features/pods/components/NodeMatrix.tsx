/**
 * The reachability matrix of the listed nodes: every pod × every pod from one probe run, rows and columns grouped by
 * node, each cell its measured verdict and handshake time (a real connect with the probe's nonce, never derived). A
 * cell opens its path below the grid: why it failed (the node whose route is missing, or with a trace the rule that
 * dropped it and the node it is on) and, traced, every step through both nodes.
 */
import { useMemo, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { EndpointView } from '../../../../../shared/domain/endpoints';
import type { ProbeMatrix, ProbeMatrixCell } from '../../../../../shared/domain/nodes';
import { useClient } from '../../../lib/connection-context';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { Pill } from '../../../lib/ui/StatusPill';
import { PathTrace } from '../detail/components/PathTrace';
import { VERDICT_LABEL } from '../detail/model/reachability';
import { cellGone, cellIndex, cellKey, cellPath, matrixCounts, matrixGroups, matrixNodes } from '../model/matrix';

const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(0));

/**
 * readyNow: the ids of the listed pods that are Ready now. A cell of a pod stopped or removed since the run shows
 * grey ("not ready now"), and the summary is green only while every measured pod still is.
 */
export function NodeMatrix({
  nodeIds,
  views,
  readyNow,
  onClose,
}: {
  nodeIds: string[];
  views: Map<string, EndpointView>;
  readyNow?: ReadonlySet<string>;
  onClose: () => void;
}) {
  const client = useClient();
  const nodes = matrixNodes(nodeIds, views);
  const [trace, setTrace] = useState(false);
  const [open, setOpen] = useState<string | undefined>();
  // runs answered (measured or failed): what a test waits on instead of a grid that may be the last run's
  const [runs, setRuns] = useState(0);
  const run = useMutation({
    mutationFn: (): Promise<ProbeMatrix> => client.call('nodes.matrix', { endpointIds: nodes.measured.map((v) => v.id), trace }),
    onSuccess: () => setOpen(undefined),
    onSettled: () => setRuns((n) => n + 1),
  });
  const m = run.data;
  return (
    <section className="node-matrix" data-testid="node-matrix" data-runs={runs} aria-label="Reachability matrix">
      <div className="node-matrix-head">
        <h2 className="node-matrix-title">Reachability matrix</h2>
        <span className="muted small">
          {nodes.measured.length
            ? `pods × pods of ${nodes.measured.map((v) => v.label).join(', ')}`
            : 'no listed node can be measured here'}
        </span>
        <span className="toolbar-spacer" />
        <label
          className="small node-matrix-trace"
          title="follow every connection through both nodes' netns: names the rule or route that decided"
        >
          <input type="checkbox" checked={trace} onChange={(e) => setTrace(e.target.checked)} /> trace every path
        </label>
        <button
          type="button"
          className="btn btn-primary btn-small"
          disabled={run.isPending || !nodes.measured.length}
          onClick={() => run.mutate()}
        >
          {run.isPending ? 'Measuring…' : m ? 'Measure again' : 'Measure'}
        </button>
        <button type="button" className="btn btn-ghost btn-small" onClick={onClose} aria-label="Close the matrix">
          Close
        </button>
      </div>
      {nodes.left.length > 0 && (
        <p className="small muted" data-testid="matrix-left-out">
          Not in the matrix: {nodes.left.map((l) => `${l.view.label} (${l.why})`).join('; ')}.
        </p>
      )}
      {run.error && <ErrorView error={run.error} title="Could not measure the matrix" />}
      {!m && !run.isPending && !run.error && (
        <p className="small muted">Each ordered pair of pods is connected once, with real packets, from the sending pod&apos;s netns.</p>
      )}
      {m && <MatrixGrid m={m} readyNow={readyNow} open={open} onOpen={(k) => setOpen(open === k ? undefined : k)} />}
    </section>
  );
}

function MatrixGrid({
  m,
  readyNow,
  open,
  onOpen,
}: {
  m: ProbeMatrix;
  readyNow?: ReadonlySet<string>;
  open: string | undefined;
  onOpen: (key: string) => void;
}) {
  const groups = useMemo(() => matrixGroups(m), [m]);
  const cells = useMemo(() => cellIndex(m), [m]);
  const counts = matrixCounts(m, readyNow);
  const nameOf = (id: string) => m.pods.find((p) => p.id === id)?.name;
  const opened = open ? cells.get(open) : undefined;
  return (
    <div className="stack-s">
      <p className="small" data-testid="matrix-summary">
        {counts.failed > 0 ? (
          <Pill tone="bad">
            {counts.failed} of {m.cells.length} failed
          </Pill>
        ) : counts.reachable === 0 || counts.gone > 0 ? (
          // nothing measured, or pods stopped since: what was measured is not a verdict on the pods now
          <Pill tone="muted">
            {counts.reachable} reachable{counts.gone > 0 ? ` · ${counts.gone} of a pod not ready now` : ''}
          </Pill>
        ) : (
          <Pill tone="ok">all {counts.reachable} reachable</Pill>
        )}{' '}
        <span className="muted">
          {m.pods.length} pods on {groups.length} node{groups.length === 1 ? '' : 's'} · measured in {(m.durationMs / 1000).toFixed(1)} s at{' '}
          {new Date(m.measuredAt).toLocaleTimeString()}
          {m.traced ? ' · traced' : ''}
        </span>
      </p>
      {m.errors.length > 0 && (
        <ul className="small text-bad" data-testid="matrix-errors">
          {m.errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      <div className="node-matrix-scroll">
        <table className="node-matrix-grid" data-testid="matrix-grid">
          <thead>
            <tr>
              <th colSpan={2} rowSpan={2} className="node-matrix-corner small muted">
                from ↓ · to →
              </th>
              {groups.map((g) => (
                <th key={g.node} colSpan={g.pods.length} className="node-matrix-node" scope="colgroup">
                  {g.node}
                </th>
              ))}
            </tr>
            <tr>
              {groups.flatMap((g) =>
                g.pods.map((p) => (
                  <th key={p.id} scope="col" className="node-matrix-pod" title={`${p.name} ${p.ip}`}>
                    {p.name}
                  </th>
                )),
              )}
            </tr>
          </thead>
          <tbody>
            {groups.map((g) =>
              g.pods.map((from, i) => (
                <tr key={from.id} data-testid="matrix-row" data-pod={from.name}>
                  {i === 0 && (
                    <th rowSpan={g.pods.length} scope="rowgroup" className="node-matrix-node">
                      {g.node}
                    </th>
                  )}
                  <th scope="row" className="node-matrix-pod" title={`${from.name} ${from.ip}`}>
                    {from.name}
                  </th>
                  {groups.flatMap((h) =>
                    h.pods.map((to) => {
                      if (to.id === from.id) return <td key={to.id} className="node-matrix-self" aria-label="the same pod" />;
                      const k = cellKey(from.id, to.id);
                      const c = cells.get(k);
                      return (
                        <Cell
                          key={to.id}
                          c={c}
                          gone={!!c && cellGone(c, readyNow)}
                          open={open === k}
                          onOpen={() => onOpen(k)}
                          toName={to.name}
                        />
                      );
                    }),
                  )}
                </tr>
              )),
            )}
          </tbody>
        </table>
      </div>
      {opened && (
        <div className="node-matrix-path" data-testid="matrix-path">
          <h3 className="small">
            {nameOf(opened.from)} on {opened.fromNode} → {nameOf(opened.to)} on {opened.toNode}:{' '}
            <Pill tone={opened.verdict === 'reachable' ? 'ok' : 'bad'}>{VERDICT_LABEL[opened.verdict]}</Pill>
            {opened.rttMs !== undefined && <span className="muted"> {ms(opened.rttMs)} ms</span>}
          </h3>
          <p className="small">{opened.note}</p>
          {/* traced, the trace says it first (with the step that decided it) */}
          {opened.why && !opened.trace && (
            <p className="small" data-testid="matrix-why">
              <strong>Why: </strong>
              {opened.why}
            </p>
          )}
          {opened.trace ? (
            <PathTrace path={cellPath(m, opened)} sandboxId={opened.from} nameOf={nameOf} ownerTraces={false} />
          ) : (
            opened.verdict !== 'reachable' && (
              <p className="small muted">Measure again with “trace every path” to follow it rule by rule through both nodes.</p>
            )
          )}
        </div>
      )}
    </div>
  );
}

function Cell({
  c,
  gone,
  open,
  onOpen,
  toName,
}: {
  c: ProbeMatrixCell | undefined;
  gone: boolean;
  open: boolean;
  onOpen: () => void;
  toName: string;
}) {
  if (!c)
    return (
      <td className="node-matrix-cell" data-verdict="none">
        <span className="muted small">not measured</span>
      </td>
    );
  const ok = c.verdict === 'reachable';
  const tone = gone ? 'node-matrix-gone' : ok ? 'node-matrix-ok' : 'node-matrix-bad';
  return (
    <td className="node-matrix-cell" data-verdict={c.verdict} data-gone={gone ? 'true' : undefined}>
      <button
        type="button"
        className={['node-matrix-btn', tone, open ? 'node-matrix-open' : ''].filter(Boolean).join(' ')}
        aria-expanded={open}
        aria-label={`to ${toName}: ${VERDICT_LABEL[c.verdict]}${c.rttMs !== undefined ? ` in ${ms(c.rttMs)} ms` : ''}${gone ? ' (a pod not ready now)' : ''}`}
        title={c.why ?? c.note}
        onClick={onOpen}
      >
        {gone ? 'not ready now' : `${ok ? '✓' : '✗'} ${c.rttMs !== undefined ? `${ms(c.rttMs)} ms` : VERDICT_LABEL[c.verdict]}`}
      </button>
    </td>
  );
}
