/**
 * Keeps react-query in step with pushed events: summaries are written straight into the list cache (no refetch
 * per event), a pod's status is invalidated when it changes, CNI config and endpoint changes refresh their queries.
 * The kernel's live view of a pod is re-read only when that pod changes state (not on every progress step).
 */
import { useEffect } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import type { SandboxSummary } from '../../../shared/domain/sandbox';
import type { ContainerSummary } from '../../../shared/domain/container';
import type { ListDelta } from '../../../shared/domain/endpoints';
import type { PushedEvent } from '../../../shared/ipc/events';
import { podOfStatusKey, queryKeys } from '../lib/query-keys';
import { useClient } from '../lib/connection-context';

/**
 * One pass over the cached list however many rows changed (a re-list of a 10k-pod endpoint can change thousands):
 * changed rows are replaced in place, unchanged ones keep their object (so memoised rows and the filter index stay),
 * new rows go first (newest first is the table's order anyway).
 */
export function mergeDelta<T extends { id: string }>(old: T[] | undefined, delta: ListDelta<T>): T[] | undefined {
  if (!old) return old;
  if (delta.upserts.length === 0 && delta.removed.length === 0) return old;
  const up = new Map(delta.upserts.map((r) => [r.id, r]));
  const gone = new Set(delta.removed);
  const out: T[] = [];
  for (const r of old) {
    if (gone.has(r.id)) continue;
    const u = up.get(r.id);
    if (u) up.delete(r.id);
    out.push(u ?? r);
  }
  return up.size > 0 ? [...up.values(), ...out] : out;
}

/**
 * The one way a change to an endpoint's pods reaches the cache, whether the main process pushed a delta (a CRI
 * endpoint's re-list or events) or the local engine an event: rows merged into the list, the status of a changed
 * pod re-read if it is open, everything cached about a removed pod dropped.
 */
export function applyPodsDelta(qc: QueryClient, endpointId: string, delta: ListDelta<SandboxSummary>): void {
  qc.setQueryData<SandboxSummary[]>(queryKeys.pods(endpointId), (old) => mergeDelta(old, delta));
  for (const id of delta.removed) {
    qc.removeQueries({ queryKey: queryKeys.pod(endpointId, id) });
    qc.removeQueries({ queryKey: queryKeys.podLive(endpointId, id) });
  }
  if (delta.upserts.length === 0) return;
  // only an open pod's status is cached: one pass over the cache however many rows changed
  const changed = new Set(delta.upserts.map((p) => p.id));
  void qc.invalidateQueries({
    predicate: (q) => {
      const id = podOfStatusKey(q.queryKey, endpointId);
      return id !== undefined && changed.has(id);
    },
  });
}

export function applyEvent(qc: QueryClient, e: PushedEvent): void {
  if (e.kind === 'delta') {
    if (e.pods) applyPodsDelta(qc, e.endpointId, e.pods);
    if (e.containers) {
      const containers = e.containers;
      qc.setQueryData<ContainerSummary[]>(queryKeys.containers(e.endpointId), (old) => mergeDelta(old, containers));
    }
    return;
  }
  if (e.kind === 'endpoints.changed') {
    // a removed endpoint's cache goes with it: its last error or list must not greet a later endpoint of that id
    const kept = new Set(e.endpoints.map((x) => x.id));
    for (const old of qc.getQueryData<Array<{ id: string }>>(queryKeys.endpoints) ?? [])
      if (!kept.has(old.id)) qc.removeQueries({ queryKey: queryKeys.endpoint(old.id) });
    qc.setQueryData(queryKeys.endpoints, e.endpoints);
    return;
  }
  if (e.kind === 'container') {
    void qc.invalidateQueries({ queryKey: queryKeys.containers(e.endpointId) });
    return;
  }
  if (e.kind === 'lab.progress') {
    // the lab page follows its own run; a finished run refreshes the list
    if (e.progress.step === 'done') void qc.invalidateQueries({ queryKey: queryKeys.lab(e.endpointId) });
    return;
  }
  // session output and pull progress are followed by the screens that asked for them
  if (e.kind !== 'sandbox') return;
  const { endpointId, event } = e;
  switch (event.type) {
    case 'sandbox.added':
    case 'sandbox.changed':
      applyPodsDelta(qc, endpointId, { upserts: [event.summary], removed: [] });
      // the kernel's view changes with the pod's state, not with each progress step
      if (event.type === 'sandbox.changed') void qc.invalidateQueries({ queryKey: queryKeys.podLive(endpointId, event.id) });
      break;
    case 'sandbox.removed':
      applyPodsDelta(qc, endpointId, { upserts: [], removed: [event.id] });
      break;
    case 'sandbox.progress':
      void qc.invalidateQueries({ queryKey: queryKeys.pod(endpointId, event.id) });
      break;
    case 'cni.config':
      qc.setQueryData(queryKeys.cniConfig(endpointId), event.config);
      // NetworkReady follows the conf dir: a new conflist can make it true or false
      void qc.invalidateQueries({ queryKey: queryKeys.runtimeConditions(endpointId) });
      void qc.invalidateQueries({ queryKey: queryKeys.previews(endpointId) });
      break;
  }
}

export function useEngineEvents(): void {
  const client = useClient();
  const qc = useQueryClient();
  useEffect(() => client.onEvent((e) => applyEvent(qc, e)), [client, qc]);
}
