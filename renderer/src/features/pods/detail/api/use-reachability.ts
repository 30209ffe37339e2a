/**
 * The Reachability panel's state: the last probe report (polled until the probe-on-ready has left one), Probe and the
 * traced probe behind Why?/Trace, and which path's trace is open.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { ProbeReport } from '../../../../../../shared/domain/probe';
import type { PodscopeClient } from '../../../../../../shared/ipc/client';
import { useClient } from '../../../../lib/connection-context';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { queryKeys } from '../../../../lib/query-keys';

const lastProbeQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: queryKeys.podProbe(endpointId, id),
    queryFn: () => client.call('sandbox.lastProbe', { endpointId, id }),
    // the probe-on-ready may still be running when the detail opens: look again until a report exists
    refetchInterval: (q) => (q.state.data === null ? 2000 : false),
  });

/**
 * The list's network column: the same cached report the detail reads, without the detail's poll — except for a ready
 * pod younger than a minute that has none yet, whose probe-on-ready is likely still running.
 */
export function useRowProbe(pod: { id: string; state: string; createdAt: string }, enabled: boolean, nodeId?: string) {
  const client = useClient();
  const current = useEndpointId();
  // a row of the list is its own node's (several nodes may be listed)
  const endpointId = nodeId ?? current;
  return useQuery({
    ...lastProbeQuery(client, endpointId, pod.id),
    enabled,
    refetchInterval: (q) =>
      pod.state === 'SANDBOX_READY' && q.state.data === null && Date.now() - Date.parse(pod.createdAt) < 60_000 ? 3000 : false,
  });
}

/** the last probe report of a pod, from the cache the Reachability panel fills (the topology marks its narrow links) */
export function useLastProbe(sandboxId: string, enabled: boolean): ProbeReport | null | undefined {
  const client = useClient();
  const endpointId = useEndpointId();
  return useQuery({ ...lastProbeQuery(client, endpointId, sandboxId), enabled }).data;
}

export function useReachability(sandboxId: string) {
  const client = useClient();
  const endpointId = useEndpointId();
  const known = useCurrentEndpoint() !== undefined;
  const available = useEndpointCapabilities().liveNetwork;
  const qc = useQueryClient();
  const last = useQuery({ ...lastProbeQuery(client, endpointId, sandboxId), enabled: known && available });
  const keep = (report: ProbeReport) => qc.setQueryData(queryKeys.podProbe(endpointId, sandboxId), report);
  const probe = useMutation({ mutationFn: () => client.call('sandbox.probe', { endpointId, id: sandboxId }), onSuccess: keep });
  // Why?/Trace: one traced probe explains every path; the row asked about opens
  const trace = useMutation({
    mutationFn: () => client.call('sandbox.probe', { endpointId, id: sandboxId, trace: true }),
    onSuccess: keep,
  });
  const [open, setOpen] = useState<number | null>(null);
  const report: ProbeReport | null | undefined = last.data;
  return {
    known,
    available,
    report,
    /** the first error to show, with its title */
    error: probe.isError
      ? { error: probe.error, title: 'Probe failed' }
      : trace.isError
        ? { error: trace.error, title: 'Trace failed' }
        : last.isError
          ? { error: last.error, title: 'Could not read the last probe' }
          : undefined,
    probing: probe.isPending,
    tracing: trace.isPending,
    busy: probe.isPending || trace.isPending,
    open,
    runProbe: () => {
      setOpen(null);
      probe.mutate();
    },
    explain: (i: number) => {
      if (open === i) return setOpen(null);
      setOpen(i);
      if (!report?.paths[i]?.trace) trace.mutate();
    },
  };
}

export type ReachabilityModel = ReturnType<typeof useReachability>;
