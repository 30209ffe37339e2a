/**
 * What changed between two lists of one CRI endpoint: rows added, changed or removed. Unchanged rows keep their
 * object (the renderer keeps their identity), and the facts a list lacks (network facts of pods, exit facts of
 * containers) are carried over from the previous row and named for re-reading only when they may have changed.
 */
import type { ContainerSummary } from '../../shared/domain/container';
import type { ListDelta } from '../../shared/domain/endpoints';
import type { SandboxSummary } from '../../shared/domain/sandbox';

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}

/** the list facts of a sandbox row are the same (network facts are compared separately: the list lacks them) */
export function sameSandboxListFacts(a: SandboxSummary, b: SandboxSummary): boolean {
  return (
    a.state === b.state &&
    a.createdAtNs === b.createdAtNs &&
    a.runtimeHandler === b.runtimeHandler &&
    a.metadata.name === b.metadata.name &&
    a.metadata.namespace === b.metadata.namespace &&
    a.metadata.uid === b.metadata.uid &&
    a.metadata.attempt === b.metadata.attempt &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.annotations, b.annotations)
  );
}

export function sameContainer(a: ContainerSummary, b: ContainerSummary): boolean {
  return (
    a.state === b.state &&
    a.podSandboxId === b.podSandboxId &&
    a.createdAtNs === b.createdAtNs &&
    a.image === b.image &&
    a.imageRef === b.imageRef &&
    a.name === b.name &&
    a.metadata.attempt === b.metadata.attempt &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.annotations, b.annotations)
  );
}

/**
 * The delta from the last list to a new one, and the new map. `changed` rows keep the network facts the previous
 * row had (the list does not carry them); `needNet` names the rows whose facts must be (re)read: new rows and rows
 * whose state changed (a stopped pod's network is torn down).
 */
export function diffSandboxes(
  prev: ReadonlyMap<string, SandboxSummary>,
  listed: SandboxSummary[],
): { next: Map<string, SandboxSummary>; delta: ListDelta<SandboxSummary>; needNet: string[] } {
  const next = new Map<string, SandboxSummary>();
  const upserts: SandboxSummary[] = [];
  const needNet: string[] = [];
  for (const row of listed) {
    const old = prev.get(row.id);
    if (old && sameSandboxListFacts(old, row)) {
      next.set(row.id, old); // unchanged: the same object, so the renderer keeps the row's identity
      continue;
    }
    const merged = old ? { ...row, ip: old.ip, additionalIps: old.additionalIps, hostNetwork: old.hostNetwork } : row;
    next.set(row.id, merged);
    upserts.push(merged);
    if (!old || old.state !== row.state) needNet.push(row.id);
  }
  const removed: string[] = [];
  for (const id of prev.keys()) if (!next.has(id)) removed.push(id);
  return { next, delta: { upserts, removed }, needNet };
}

/**
 * Like diffSandboxes for containers: ListContainers has no exit code or reason, so `needExit` names the containers
 * that are exited and new or just exited (one ContainerStatus each); others keep what they had.
 */
export function diffContainers(
  prev: ReadonlyMap<string, ContainerSummary>,
  listed: ContainerSummary[],
): { next: Map<string, ContainerSummary>; delta: ListDelta<ContainerSummary>; needExit: string[] } {
  const next = new Map<string, ContainerSummary>();
  const upserts: ContainerSummary[] = [];
  const needExit: string[] = [];
  for (const c of listed) {
    const old = prev.get(c.id);
    if (old && sameContainer(old, c)) {
      next.set(c.id, old);
      continue;
    }
    const merged = old ? { ...c, exitCode: old.exitCode, reason: old.reason } : c;
    next.set(c.id, merged);
    upserts.push(merged);
    if (c.state === 'CONTAINER_EXITED' && old?.state !== 'CONTAINER_EXITED') needExit.push(c.id);
  }
  const removed: string[] = [];
  for (const id of prev.keys()) if (!next.has(id)) removed.push(id);
  return { next, delta: { upserts, removed }, needExit };
}
