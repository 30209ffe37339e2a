/**
 * Pods view: filters and bulk actions over the table, the selected pod's detail underneath (Wireshark-style).
 * With nothing open the list fills the view; with a pod open the split between them is draggable and remembered.
 * Bulk actions act only on checked rows the filter shows. When the endpoint cannot be reached the last list stays,
 * greyed, with its age, and is refreshed as soon as the endpoint answers again.
 */
import { useEffect, useMemo, useRef } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { EmptyState } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { useNavigation } from '../../../lib/navigation';
import { age } from '../../../lib/format';
import { useNow } from '../../../lib/use-now';
import { PodDetail } from '../detail/components/PodDetail';
import { useCurrentEndpoint, useEndpointId } from '../../../lib/endpoint';
import { podsQuery } from '../api/queries';
import { useContainersByPod } from '../api/containers';
import { useReportShownRows } from '../api/shown-rows';
import { buildPodIndex, createIndexedFilter } from '../filter';
import { usePodsUi } from '../store';
import { usePodsLayout } from '../layout-store';
import { PodActions } from './PodActions';
import { PodsTable } from './PodsTable';
import { PodsToolbar } from './PodsToolbar';
import { useHostPortClashes } from './HostPortClash';
import { SplitHandle } from './SplitHandle';

export function PodsPage() {
  const client = useClient();
  const endpointId = useEndpointId();
  const selectedId = useNavigation((s) => s.selectedId);
  const select = useNavigation((s) => s.select);
  const setView = useNavigation((s) => s.setView);
  const setDetailTab = useNavigation((s) => s.setDetailTab);
  const filters = usePodsUi((s) => s.filters);
  const checked = usePodsUi((s) => s.checked);
  const setChecked = usePodsUi((s) => s.setChecked);
  const listShare = usePodsLayout((s) => s.listShare);
  const pods = useQuery(podsQuery(client, endpointId));
  const endpoint = useCurrentEndpoint();
  const now = useNow(1000);
  const pageRef = useRef<HTMLDivElement>(null);
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

  const open = selected !== undefined;
  const pageClass = ['pods-page', open ? 'pods-page-split' : 'pods-page-full', stale ? 'pods-page-stale' : ''].filter(Boolean).join(' ');
  const style = open
    ? ({ gridTemplateRows: `minmax(0, ${listShare}fr) 6px minmax(0, ${1 - listShare}fr)` } as React.CSSProperties)
    : undefined;
  const byPod = useContainersByPod(client, endpointId);
  const reportShownRows = useReportShownRows(client, endpointId, endpoint?.kind === 'cri');
  const containerCounts = useMemo(() => {
    const m = new Map<string, [number, number]>();
    for (const [pod, list] of byPod) m.set(pod, [list.filter((c) => c.state === 'CONTAINER_RUNNING').length, list.length]);
    return m;
  }, [byPod]);

  return (
    <div className={pageClass} ref={pageRef} style={style}>
      <div className="pods-top">
        <PodsToolbar
          pods={all}
          shown={shown.length}
          actions={
            (checkedShown.length > 0 || checkedHidden > 0) && (
              <div className="bulk" data-testid="bulk">
                <span className="bulk-count">{checkedShown.length} selected</span>
                {checkedHidden > 0 && (
                  <span
                    className="bulk-hidden"
                    data-testid="bulk-hidden"
                    title="checked rows the filter hides are left out of bulk actions"
                  >
                    {checkedHidden} hidden by the filter
                    <button type="button" className="btn btn-ghost btn-small" onClick={() => setChecked(checkedShown.map((p) => p.id))}>
                      Uncheck
                    </button>
                  </span>
                )}
                {checkedShown.length > 0 && <PodActions pods={checkedShown} onRemoved={() => setChecked([])} />}
              </div>
            )
          }
        />
        {unreachable && (
          <div className="unreachable" role="alert" data-testid="pods-unreachable">
            <strong>cannot reach {endpointName}</strong>: {reason}
            <span className="muted small">
              {stale ? ` · showing the list from ${age(new Date(pods.dataUpdatedAt).toISOString(), now)} ago, greyed` : ''} · retrying by
              itself
            </span>
          </div>
        )}
        {unreachable && pods.data === undefined ? (
          pods.isError ? (
            <div className="pad">
              <ErrorView error={pods.error} title={`Could not list sandboxes on ${endpointName}`} />
            </div>
          ) : (
            <div className="pad muted">Waiting for {endpointName}…</div>
          )
        ) : pods.isPending ? (
          <div className="pad muted">Loading sandboxes…</div>
        ) : all.length === 0 ? (
          <EmptyState
            title="No pod sandboxes yet"
            action={
              <button type="button" className="btn btn-primary" onClick={() => setView('create')}>
                Create a sandbox
              </button>
            }
          >
            A sandbox is a network namespace, the CNI plugins' work on it and a pause container. Create one to see every plugin call, the IP
            it got and why, its host ports and its bandwidth limits. You can also import a crictl pod config.
          </EmptyState>
        ) : shown.length === 0 ? (
          <EmptyState
            title="No sandbox matches these filters"
            action={
              <button type="button" className="btn" onClick={() => usePodsUi.getState().clearFilters()}>
                Clear filters
              </button>
            }
          />
        ) : (
          <div className={stale ? 'pods-stale' : 'pods-live'} data-testid="pods-list" data-stale={stale ? 'true' : 'false'}>
            <PodsTable
              pods={shown}
              selectedId={selectedId}
              onSelect={select}
              onOpen={(id) => {
                select(id);
                setDetailTab('overview');
              }}
              hostPortsListed={endpoint?.kind !== 'cri'}
              containerCounts={containerCounts}
              containersUnavailable={endpoint?.capabilities.containers === false}
              clashes={clashes}
              onShownRows={reportShownRows}
            />
          </div>
        )}
        {!open && all.length > 0 && shown.length > 0 && (
          <div className="detail-hint muted small">
            Select a sandbox to see its namespace, network, CNI trace and lifecycle. ↑/↓ move through the list.
          </div>
        )}
      </div>
      {open && <SplitHandle container={pageRef} />}
      {open && (
        <div className="pods-detail">
          <PodDetail summary={selected} containers={byPod.get(selected.id) ?? []} />
        </div>
      )}
    </div>
  );
}
