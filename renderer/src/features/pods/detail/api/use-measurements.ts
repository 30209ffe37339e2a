/**
 * Throughput and CNI CHECK, run from the Bandwidth tab, the Trace tab's CHECK panel or the Overview's "measure now":
 * the engine keeps no last report of either, so the last one this window measured is kept in the query cache, under
 * the pod, where every view of the pod reads it. A run in flight shows as busy wherever it was started.
 */
import { useIsMutating, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { CniCheckReport, ThroughputReport } from '../../../../../../shared/domain/measure';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { queryKeys } from '../../../../lib/query-keys';

/** a value only this window writes: never fetched, never stale */
function useKept<T>(key: readonly unknown[]) {
  const qc = useQueryClient();
  return useQuery<T | null>({
    queryKey: key,
    queryFn: () => qc.getQueryData<T>(key) ?? null,
    staleTime: Infinity,
    gcTime: Infinity,
  });
}

/** A measurement run on demand whose last report is kept under `key`: the report, a run, busy wherever it was started. */
function useKeptMeasurement<T>(key: readonly unknown[], measure: () => Promise<T>, onSettled?: () => void) {
  const qc = useQueryClient();
  const kept = useKept<T>(key);
  const m = useMutation({ mutationKey: key, mutationFn: measure, onSuccess: (r) => qc.setQueryData(key, r), onSettled });
  const pending = useIsMutating({ mutationKey: key }) > 0;
  return { report: kept.data ?? undefined, run: () => m.mutate(), pending, error: m.isError ? m.error : undefined };
}

export function useThroughput(sandboxId: string) {
  const client = useClient();
  const endpointId = useEndpointId();
  return useKeptMeasurement(queryKeys.podThroughput(endpointId, sandboxId), (): Promise<ThroughputReport> =>
    client.call('sandbox.throughput', { endpointId, id: sandboxId }),
  );
}

export function useCniCheck(sandboxId: string) {
  const client = useClient();
  const endpointId = useEndpointId();
  const qc = useQueryClient();
  return useKeptMeasurement(
    queryKeys.podCheck(endpointId, sandboxId),
    (): Promise<CniCheckReport> => client.call('sandbox.cniCheck', { endpointId, id: sandboxId }),
    // the CHECK execs are now in the pod's trace: show them without waiting for an event
    () => void qc.invalidateQueries({ queryKey: queryKeys.pod(endpointId, sandboxId), exact: true }),
  );
}
