/**
 * ListPodSandbox with containerd's filter semantics (docs/semantics.md#status-and-list): `id` is first normalised from a unique prefix to
 * the full id, then matched exactly (so an ambiguous prefix lists nothing); `state`; `label_selector` (all pairs).
 * Filtering is done here over engine.list() so the wire behaviour does not depend on the engine's own filter.
 */
import type { SandboxSummary } from '../../../shared/domain/sandbox';
import type * as pb from '../generated/runtime_v1';
import { stateToProto, summaryToPodSandbox } from '../convert/sandbox';
import type { CriEngine } from './handler';

export function matchesFilter(s: SandboxSummary, filter: pb.PodSandboxFilter | undefined, fullId: string | undefined): boolean {
  if (!filter) return true;
  if (filter.id !== '' && s.id !== fullId) return false;
  if (filter.state && stateToProto(s.state) !== filter.state.state) return false;
  for (const [k, v] of Object.entries(filter.labelSelector)) if (s.labels[k] !== v) return false;
  return true;
}

export async function listPodSandbox(engine: CriEngine, req: pb.ListPodSandboxRequest): Promise<pb.ListPodSandboxResponse> {
  const all = await engine.list();
  const filter = req.filter;
  let fullId: string | undefined;
  if (filter && filter.id !== '') {
    const byPrefix = all.filter((s) => s.id.startsWith(filter.id));
    fullId = all.some((s) => s.id === filter.id) ? filter.id : byPrefix.length === 1 ? byPrefix[0]!.id : filter.id;
  }
  return { items: all.filter((s) => matchesFilter(s, filter, fullId)).map(summaryToPodSandbox) };
}
