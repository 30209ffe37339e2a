/**
 * The reachability matrix of the listed nodes, as the pods page shows it: which listed nodes it can measure (CRI
 * runtimes whose pods this process measures; the built-in engine's and a Podscope daemon's pods are probed by their own
 * engine), rows and columns grouped by node, and each cell as a probe path (so a failed one opens the same Why panel
 * as a pod's own paths). Every figure shown comes from the run: a cell not in the reply is shown as not measured.
 */
import type { EndpointView } from '../../../../../shared/domain/endpoints';
import type { ProbeMatrix, ProbeMatrixCell, ProbeMatrixPod } from '../../../../../shared/domain/nodes';
import type { ProbePath } from '../../../../../shared/domain/probe';

export interface MatrixNodes {
  /** the listed nodes measured by the matrix, in list order */
  measured: EndpointView[];
  /** the listed nodes it leaves out, each with why */
  left: Array<{ view: EndpointView; why: string }>;
}

export function matrixNodes(nodeIds: string[], views: Map<string, EndpointView>): MatrixNodes {
  const out: MatrixNodes = { measured: [], left: [] };
  for (const id of nodeIds) {
    const v = views.get(id);
    if (!v) continue;
    if (v.kind !== 'cri') out.left.push({ view: v, why: "this machine's own pods: each pod's Reachability probes them" });
    else if (v.capabilities.pluginTrace) out.left.push({ view: v, why: 'a Podscope daemon: its own engine probes its pods' });
    else if (!v.capabilities.measurements) out.left.push({ view: v, why: 'its pods cannot be measured from here' });
    else out.measured.push(v);
  }
  return out;
}

export interface MatrixGroup {
  node: string;
  pods: ProbeMatrixPod[];
}

/** the pods grouped by node, in the matrix's node order (the reply is grouped already; this keeps it so) */
export function matrixGroups(m: ProbeMatrix): MatrixGroup[] {
  return m.nodes.map((node) => ({ node, pods: m.pods.filter((p) => p.node === node) })).filter((g) => g.pods.length > 0);
}

export const cellKey = (from: string, to: string) => `${from}>${to}`;

export function cellIndex(m: ProbeMatrix): Map<string, ProbeMatrixCell> {
  return new Map(m.cells.map((c) => [cellKey(c.from, c.to), c]));
}

/** a cell as the probe path it was measured as (pod → pod), for the Why panel */
export function cellPath(m: ProbeMatrix, c: ProbeMatrixCell): ProbePath {
  const from = m.pods.find((p) => p.id === c.from);
  const to = m.pods.find((p) => p.id === c.to);
  return {
    kind: 'peer',
    from: from ? `pod ${from.name}` : 'pod',
    to: to?.ip ?? c.to,
    proto: 'tcp',
    verdict: c.verdict,
    ...(c.rttMs !== undefined && { rttMs: c.rttMs }),
    measured: true,
    note: c.note,
    ...(c.why && { why: c.why }),
    ...(c.trace && { trace: c.trace }),
    fromNode: c.fromNode,
    toNode: c.toNode,
  };
}

/** a cell whose sending or receiving pod is no longer ready in the live list: what it measured no longer holds */
export const cellGone = (c: ProbeMatrixCell, readyNow?: ReadonlySet<string>): boolean =>
  readyNow !== undefined && (!readyNow.has(c.from) || !readyNow.has(c.to));

/**
 * How many cells connected and how many did not; with the pods ready now, the cells of a pod stopped or removed since
 * the run are counted apart (gone), never as reachable.
 */
export function matrixCounts(m: ProbeMatrix, readyNow?: ReadonlySet<string>): { reachable: number; failed: number; gone: number } {
  const live = m.cells.filter((c) => !cellGone(c, readyNow));
  const reachable = live.filter((c) => c.verdict === 'reachable').length;
  return { reachable, failed: live.length - reachable, gone: m.cells.length - live.length };
}
