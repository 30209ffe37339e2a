/**
 * Keeps react-query in step with pushed events: summaries are written straight into the list cache (no refetch
 * per event), a pod's status is invalidated when it changes, CNI config and endpoint changes refresh their queries.
 * The kernel's live view of a pod is re-read only when that pod changes state (not on every progress step).
 */
import { useEffect } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import type { SandboxSummary } from '../../../shared/domain/sandbox';
import type { PushedEvent } from '../../../shared/ipc/events';
import { podKeys } from '../features/pods/api/queries';
import { containerKeys } from '../features/pods/api/containers';
import { cniKey } from '../features/cni/api/queries';
import { endpointsKey } from '../lib/endpoint';
import { liveKey } from '../features/pods/detail/api/queries';
import { useClient } from '../lib/connection-context';

export function applyEvent(qc: QueryClient, e: PushedEvent): void {
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
