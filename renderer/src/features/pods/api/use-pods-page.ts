/**
 * The pods page's data: the pods of every listed node (each node's list its own query, kept live by events or the main
 * process's follower; their union shown with each pod's node), filtered by the toolbar's filters over a precomputed
 * index, the selected pod, the checked rows the filter shows and hides, host-port clashes (per node), container counts
 * per pod, and which nodes do not answer (their last list stays, greyed, while they do not).
 */
import { useEffect, useMemo, useState } from 'react';
import { useQueries, useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { useNavigation } from '../../../lib/navigation';
import { useNow } from '../../../lib/use-now';
import { endpointsQuery, listedNodeIds, useEndpointId, useEndpointSelection } from '../../../lib/endpoint';
import type { ContainerSummary } from '../../../../../shared/domain/container';
import { buildPodIndex, createIndexedFilter } from '../filter';
import { usePodsUi } from '../store';
import { useHostPortClashesByNode } from '../components/HostPortClash';
import { mergeNodeLists, podsByNode, rowNode, type RowNode } from '../model/nodes';
import { podsQuery } from './queries';
import { containersQuery } from './containers';
import { useReportShownRows } from './shown-rows';

export interface NodeTrouble {
  id: string;
  label: string;
  reason: string;
  /** its last list is shown, greyed, since this long ago (ms epoch of the list) */
  listedAt?: number;
  error?: unknown;
}

export function usePodsPage() {
  const client = useClient();
  const endpointId = useEndpointId();
  const listed = useEndpointSelection((s) => s.listedIds);
  const selectedId = useNavigation((s) => s.selectedId);
  const select = useNavigation((s) => s.select);
  const setView = useNavigation((s) => s.setView);
  const setDetailTab = useNavigation((s) => s.setDetailTab);
  const filters = usePodsUi((s) => s.filters);
  const checked = usePodsUi((s) => s.checked);
  const setChecked = usePodsUi((s) => s.setChecked);
  const endpoints = useQuery(endpointsQuery(client)).data;
  const nodeIds = useMemo(() => listedNodeIds(endpoints, listed, endpointId), [endpoints, listed, endpointId]);
  const views = useMemo(() => new Map((endpoints ?? []).map((e) => [e.id, e])), [endpoints]);
  const lists = useQueries({ queries: nodeIds.map((id) => podsQuery(client, id)) });
  const containerLists = useQueries({ queries: nodeIds.map((id) => containersQuery(client, id)) });
  const now = useNow(1000);

  // one node's list keeps its array; several are merged once per change of any of them
  const datas = useSameItems(lists.map((q) => q.data));
  const { all, nodeOf } = useMemo(() => mergeNodeLists(nodeIds.map((nodeId, i) => ({ nodeId, pods: datas[i] }))), [nodeIds, datas]);
  // sorted once per list change, with each row's lowercase search key: a keystroke only scans (filter.ts)
  const index = useMemo(() => buildPodIndex(all), [all]);
  // A keystroke is one scan of precomputed keys (a few ms at 10k rows), so the list follows in the same frame as the
  // input; deferring it (useDeferredValue) measured no better and always cost a second frame.
  const filterRows = useMemo(() => createIndexedFilter(index), [index]);
  const shown = useMemo(() => filterRows(filters), [filterRows, filters]);
  const byId = useMemo(() => new Map(all.map((p) => [p.id, p])), [all]);
  const byNode = useMemo(() => podsByNode(all, nodeOf), [all, nodeOf]);
  const clashes = useHostPortClashesByNode(byNode);
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

  // which listed nodes do not answer; a node that came back is listed again at once instead of at the next poll
  const troubles: NodeTrouble[] = [];
  nodeIds.forEach((id, i) => {
    const q = lists[i]!;
    const view = views.get(id);
    const lost = view?.connected === false;
    if (!lost && !q.isError) return;
    troubles.push({
      id,
      label: view?.label ?? id,
      reason: lost ? (view?.error ?? 'no answer') : q.error instanceof Error ? q.error.message : String(q.error),
      ...(q.data !== undefined ? { listedAt: q.dataUpdatedAt } : {}),
      ...(q.isError ? { error: q.error } : {}),
    });
  });
  const lostKey = nodeIds.map((id) => (views.get(id)?.connected === false ? '0' : views.has(id) ? '1' : '?')).join('');
  useEffect(() => {
    nodeIds.forEach((id, i) => {
      if (views.get(id)?.connected === true) void lists[i]!.refetch();
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per change of a node's connected state
  }, [lostKey]);

  const stale = new Set(troubles.filter((t) => t.listedAt !== undefined).map((t) => t.id));
  const rowNodes = new Map<string, RowNode>(nodeIds.map((id) => [id, rowNode(id, views.get(id), stale.has(id))]));
  // the whole list is greyed only when every node listed is gone (one node: as before); else only that node's rows
  const allStale = nodeIds.every((id) => stale.has(id));

  const cData = useSameItems(containerLists.map((q) => q.data));
  const byPod = useMemo(() => {
    const m = new Map<string, ContainerSummary[]>();
    for (const list of cData) for (const c of list ?? []) m.set(c.podSandboxId, [...(m.get(c.podSandboxId) ?? []), c]);
    return m;
  }, [cData]);
  const criNodes = nodeIds.filter((id) => views.get(id)?.kind === 'cri');
  const reportShownRows = useReportShownRows(client, criNodes, nodeOf);
  const containerCounts = useMemo(() => {
    const m = new Map<string, [number, number]>();
    for (const [pod, list] of byPod) m.set(pod, [list.filter((c) => c.state === 'CONTAINER_RUNNING').length, list.length]);
    return m;
  }, [byPod]);

  return {
    nodeIds,
    views,
    nodeOf,
    rowNodes,
    /** more than one node exists: the list says each pod's node */
    manyNodes: (endpoints?.length ?? 1) > 1,
    pending: lists.every((q) => q.isPending),
    troubles,
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
    stale: allStale && troubles.length > 0,
    now,
  };
}

/**
 * The same array as last render while its items are the same objects: the queries' results are new arrays on every
 * render, their data only when a list changes (the usual way to keep what an earlier render had, without a ref).
 */
function useSameItems<T>(items: T[]): T[] {
  const [kept, setKept] = useState(items);
  const same = kept.length === items.length && kept.every((x, i) => x === items[i]);
  if (!same) setKept(items);
  return same ? kept : items;
}
