/**
 * The pods of several nodes in one list: each node's list stays its own query (pushed deltas keep patching it), and
 * the list shown is their union with each pod's node beside it. A pod id is a runtime's 64-hex id, so two nodes never
 * share one — except one runtime added twice (its socket and the same socket through /proc/<pid>/root): then its pods
 * are listed once, under the node listed first.
 */
import type { EndpointView } from '../../../../../shared/domain/endpoints';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';

/** what a row needs of its node: its name, and what its runtime can give the row's cells */
export interface RowNode {
  id: string;
  label: string;
  /** the list carries port mappings (Podscope's engine; CRI's ListPodSandbox has none) */
  hostPortsListed: boolean;
  /** its pods can be probed from here */
  probeable: boolean;
  /** the runtime does not serve ListContainers */
  containersUnavailable: boolean;
  /** the node does not answer now: its rows are its last list, greyed */
  stale: boolean;
}

export function rowNode(id: string, view: EndpointView | undefined, stale: boolean): RowNode {
  return {
    id,
    label: view?.label ?? id,
    hostPortsListed: view?.kind !== 'cri',
    probeable: view?.capabilities.liveNetwork !== false,
    containersUnavailable: view?.capabilities.containers === false,
    stale,
  };
}

export function mergeNodeLists(lists: Array<{ nodeId: string; pods: SandboxSummary[] | undefined }>): {
  all: SandboxSummary[];
  /** pod id → the node it is listed under */
  nodeOf: Map<string, string>;
} {
  // one node: its list as it is (the common case keeps the query's array, so nothing downstream recomputes)
  if (lists.length === 1) {
    const pods = lists[0]!.pods ?? [];
    return { all: pods, nodeOf: new Map(pods.map((p) => [p.id, lists[0]!.nodeId])) };
  }
  const all: SandboxSummary[] = [];
  const nodeOf = new Map<string, string>();
  for (const { nodeId, pods } of lists)
    for (const p of pods ?? []) {
      if (nodeOf.has(p.id)) continue;
      nodeOf.set(p.id, nodeId);
      all.push(p);
    }
  return { all, nodeOf };
}

/** the pods of each node apart: host ports clash only on one node (each node has its own netns and DNAT chain) */
export function podsByNode(all: SandboxSummary[], nodeOf: Map<string, string>): Map<string, SandboxSummary[]> {
  const out = new Map<string, SandboxSummary[]>();
  for (const p of all) {
    const n = nodeOf.get(p.id) ?? '';
    const list = out.get(n);
    if (list) list.push(p);
    else out.set(n, [p]);
  }
  return out;
}
