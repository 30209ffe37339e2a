/**
 * The pods page's data: the endpoint's list (filtered by the toolbar's filters over a precomputed index), the
 * selected pod, the checked rows the filter shows and hides, host-port clashes, container counts per pod, and whether
 * the endpoint answers (the last list stays, greyed, while it does not).
 */
import { useEffect, useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { useNavigation } from '../../../lib/navigation';
import { useNow } from '../../../lib/use-now';
import { useCurrentEndpoint, useEndpointId } from '../../../lib/endpoint';
import { buildPodIndex, createIndexedFilter } from '../filter';
import { usePodsUi } from '../store';
import { useHostPortClashes } from '../components/HostPortClash';
import { podsQuery } from './queries';
import { useContainersByPod } from './containers';
import { useReportShownRows } from './shown-rows';

export function usePodsPage() {
  const client = useClient();
  const endpointId = useEndpointId();
  const selectedId = useNavigation((s) => s.selectedId);
  const select = useNavigation((s) => s.select);
  const setView = useNavigation((s) => s.setView);
  const setDetailTab = useNavigation((s) => s.setDetailTab);
  const filters = usePodsUi((s) => s.filters);
  const checked = usePodsUi((s) => s.checked);
  const setChecked = usePodsUi((s) => s.setChecked);
  const pods = useQuery(podsQuery(client, endpointId));
  const endpoint = useCurrentEndpoint();
  const now = useNow(1000);
  const all = useMemo(() => pods.data ?? [], [pods.data]);
  // sorted once per list change, with each row's lowercase search key: a keystroke only scans (filter.ts)
  const index = useMemo(() => buildPodIndex(all), [all]);
  // A keystroke is one scan of precomputed keys (a few ms at 10k rows), so the list follows in the same frame as the
  // input; deferring it (useDeferredValue) measured no better and always cost a second frame.
  const filterRows = useMemo(() => createIndexedFilter(index), [index]);
  const shown = useMemo(() => filterRows(filters), [filterRows, filters]);
  const byId = useMemo(() => new Map(all.map((p) => [p.id, p])), [all]);
  const clashes = useHostPortClashes(all);
  // nothing per keystroke beyond the filter itself: the selection is one lookup, checked rows are few
  const selectedShown = selectedId !== undefined && byId.has(selectedId) && shown.some((p) => p.id === selectedId);
  // only what the user can see is acted on; checked rows the filter hides are counted, never stopped or removed
  const checkedShown = useMemo(() => (checked.size === 0 ? [] : shown.filter((p) => checked.has(p.id))), [shown, checked]);
  const checkedHidden = checked.size === 0 ? 0 : [...checked].filter((id) => byId.has(id)).length - checkedShown.length;
  const selected = selectedShown ? byId.get(selectedId) : undefined;

  // a pod the filter hides closes its detail (it would otherwise stay open with no row to show where it is)
  const hiddenSelection = selectedId !== undefined && byId.has(selectedId) && !selectedShown;
  useEffect(() => {
    if (hiddenSelection) select(undefined);
  }, [hiddenSelection, select]);

  // the endpoint came back: fetch the list now instead of waiting for the next poll
  const lost = endpoint?.connected === false;
  const { refetch } = pods;
  useEffect(() => {
    if (endpoint && !lost) void refetch();
  }, [lost, endpoint, refetch]);

  const unreachable = lost || pods.isError;
  const reason = lost ? (endpoint?.error ?? 'no answer') : pods.error instanceof Error ? pods.error.message : String(pods.error);
  const endpointName = endpoint?.label ?? endpointId;
  const stale = unreachable && pods.data !== undefined;

  const byPod = useContainersByPod(client, endpointId);
  const reportShownRows = useReportShownRows(client, endpointId, endpoint?.kind === 'cri');
  const containerCounts = useMemo(() => {
    const m = new Map<string, [number, number]>();
    for (const [pod, list] of byPod) m.set(pod, [list.filter((c) => c.state === 'CONTAINER_RUNNING').length, list.length]);
    return m;
  }, [byPod]);

  return {
    endpoint,
    endpointName,
    pods,
    all,
    shown,
    selectedId,
    selected,
    select,
    setView,
    setDetailTab,
    setChecked,
    checkedShown,
    checkedHidden,
    clashes,
    containerCounts,
    byPod,
    reportShownRows,
    unreachable,
    reason,
    stale,
    now,
  };
}
