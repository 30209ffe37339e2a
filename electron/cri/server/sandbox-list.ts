/**
 * ListPodSandbox with containerd's filter semantics (docs/semantics.md#status-and-list): `id` is first normalised from a unique prefix to
 * the full id, then matched exactly (so an ambiguous prefix lists nothing); `state`; `label_selector` (all pairs).
 * The engine narrows by its indexes; the exact wire rules are applied here, so they do not depend on the engine's filter.
 */
import type { SandboxSummary } from '../../../shared/domain/sandbox';
import type * as pb from '../generated/runtime_v1';
import { stateFromProto, stateToProto, summaryToPodSandbox } from '../convert/sandbox';
import type { CriEngine } from './handler';

export function matchesFilter(s: SandboxSummary, filter: pb.PodSandboxFilter | undefined, fullId: string | undefined): boolean {
  if (!filter) return true;
  if (filter.id !== '' && s.id !== fullId) return false;
  if (filter.state && stateToProto(s.state) !== filter.state.state) return false;
  for (const [k, v] of Object.entries(filter.labelSelector)) if (s.labels[k] !== v) return false;
  return true;
}

/** Converted once per list view: the engine's summaries are shared until the sandbox changes, so this cache follows them. */
const wireCache = new WeakMap<SandboxSummary, pb.PodSandbox>();

function toWire(s: SandboxSummary): pb.PodSandbox {
  let w = wireCache.get(s);
  if (!w) wireCache.set(s, (w = summaryToPodSandbox(s)));
  return w;
}

export async function listPodSandbox(engine: CriEngine, req: pb.ListPodSandboxRequest): Promise<pb.ListPodSandboxResponse> {
  const filter = req.filter;
  // The engine's indexes narrow the list (id prefix, state, label pairs); containerd's exact-or-unique-prefix rule
  // for the id is applied to what they return.
  const found = await engine.list({
    ...(filter?.id ? { id: filter.id } : {}),
    ...(filter?.state ? { state: stateFromProto(filter.state.state) } : {}),
    ...(filter && Object.keys(filter.labelSelector).length > 0 ? { labelSelector: filter.labelSelector } : {}),
  });
  let fullId: string | undefined;
  if (filter && filter.id !== '') {
    fullId = found.some((s) => s.id === filter.id) ? filter.id : found.length === 1 ? found[0]!.id : filter.id;
  }
  return { items: found.filter((s) => matchesFilter(s, filter, fullId)).map(toWire) };
}
