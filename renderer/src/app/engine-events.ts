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
import { podKeys } from '../features/pods/api/queries';
import { containerKeys } from '../features/pods/api/containers';
import { cniKey } from '../features/cni/api/queries';
import { endpointsKey } from '../lib/endpoint';
import { liveKey } from '../features/pods/detail/api/queries';
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

export function applyEvent(qc: QueryClient, e: PushedEvent): void {
  if (e.kind === 'delta') {
    const { endpointId } = e;
    if (e.pods) {
      const pods = e.pods;
      qc.setQueryData<SandboxSummary[]>(podKeys.all(endpointId), (old) => mergeDelta(old, pods));
      // only an open pod's status is cached: refresh it when its row changed, drop it when it is gone
      const touched = new Set([...pods.upserts.map((p) => p.id), ...pods.removed]);
      void qc.invalidateQueries({
        predicate: (q) =>
          q.queryKey[0] === 'ep' && q.queryKey[1] === endpointId && q.queryKey[2] === 'pod' && touched.has(String(q.queryKey[3])),
      });
    }
    if (e.containers) {
      const containers = e.containers;
      qc.setQueryData<ContainerSummary[]>(containerKeys.all(endpointId), (old) => mergeDelta(old, containers));
    }
    return;
  }
  if (e.kind === 'endpoints.changed') {
    qc.setQueryData(endpointsKey, e.endpoints);
    return;
  }
  if (e.kind === 'container') {
    void qc.invalidateQueries({ queryKey: containerKeys.all(e.endpointId) });
    return;
  }
  if (e.kind === 'lab.progress') {
    // the lab page follows its own run; a finished run refreshes the list
    if (e.progress.step === 'done') void qc.invalidateQueries({ queryKey: ['lab', e.endpointId] });
    return;
  }
  // session output and pull progress are followed by the screens that asked for them
  if (e.kind !== 'sandbox') return;
  const { endpointId, event } = e;
  const upsert = (summary: SandboxSummary) =>
    qc.setQueryData<SandboxSummary[]>(podKeys.all(endpointId), (old) => {
      if (!old) return old;
      const i = old.findIndex((p) => p.id === summary.id);
      return i < 0 ? [summary, ...old] : old.map((p, j) => (j === i ? summary : p));
    });
  switch (event.type) {
    case 'sandbox.added':
    case 'sandbox.changed':
      upsert(event.summary);
      void qc.invalidateQueries({ queryKey: podKeys.detail(endpointId, event.id) });
      if (event.type === 'sandbox.changed') void qc.invalidateQueries({ queryKey: liveKey(endpointId, event.id) });
      break;
    case 'sandbox.removed':
      qc.setQueryData<SandboxSummary[]>(podKeys.all(endpointId), (old) => old?.filter((p) => p.id !== event.id));
      qc.removeQueries({ queryKey: podKeys.detail(endpointId, event.id) });
      qc.removeQueries({ queryKey: liveKey(endpointId, event.id) });
      break;
    case 'sandbox.progress':
      void qc.invalidateQueries({ queryKey: podKeys.detail(endpointId, event.id) });
      break;
    case 'cni.config':
      qc.setQueryData(cniKey(endpointId), event.config);
      // NetworkReady follows the conf dir: a new conflist can make it true or false
      void qc.invalidateQueries({ queryKey: ['ep', endpointId, 'conditions'] });
      void qc.invalidateQueries({ queryKey: ['ep', endpointId, 'preview'] });
      break;
  }
}

export function useEngineEvents(): void {
  const client = useClient();
  const qc = useQueryClient();
  useEffect(() => client.onEvent((e) => applyEvent(qc, e)), [client, qc]);
}
