/** ListContainers: filters by id (prefix), state, pod sandbox and labels. */
import type { ContainerSummary } from '../../../shared/domain/container';
import type * as pb from '../generated/runtime_v1';
import { containerStateFromProto, summaryToContainer } from '../convert/container';
import type { CriEngine } from './handler';

/**
 * Each container's wire form, converted (and, in wire-cache.ts, encoded) once per state: the engine builds a new
 * summary per call, but its metadata, labels and annotations are the record's own objects, unchanged for the
 * container's life, so they key the cache; the primitive fields are compared, and any difference converts afresh.
 */
const wireCache = new WeakMap<object, { from: ContainerSummary; proto: pb.Container }>();

function samePrimitives(a: ContainerSummary, b: ContainerSummary): boolean {
  return (
    a.id === b.id &&
    a.podSandboxId === b.podSandboxId &&
    a.state === b.state &&
    a.createdAtNs === b.createdAtNs &&
    a.image === b.image &&
    a.imageRef === b.imageRef &&
    a.metadata === b.metadata &&
    a.annotations === b.annotations
  );
}

function toWire(s: ContainerSummary): pb.Container {
  const hit = wireCache.get(s.labels);
  if (hit && samePrimitives(hit.from, s)) return hit.proto;
  const proto = summaryToContainer(s);
  wireCache.set(s.labels, { from: s, proto });
  return proto;
}

export async function listContainers(engine: CriEngine, req: pb.ListContainersRequest): Promise<pb.ListContainersResponse> {
  const f = req.filter;
  const list = await engine.listContainers({
    ...(f?.id && { id: f.id }),
    ...(f?.state && { state: containerStateFromProto(f.state.state) }),
    ...(f?.podSandboxId && { podSandboxId: f.podSandboxId }),
    ...(f && Object.keys(f.labelSelector).length > 0 && { labelSelector: { ...f.labelSelector } }),
  });
  return { containers: list.map(toWire) };
}
