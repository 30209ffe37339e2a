/** Pods view: filters and bulk actions over the table, the selected pod's detail underneath (Wireshark-style). */
import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { EmptyState } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { useNavigation } from '../../../lib/navigation';
import { PodDetail } from '../detail/components/PodDetail';
import { useCurrentEndpoint, useEndpointId } from '../../../lib/endpoint';
import { podsQuery } from '../api/queries';
import { useContainersByPod } from '../api/containers';
import { filterPods } from '../filter';
import { usePodsUi } from '../store';
import { PodActions } from './PodActions';
import { PodsTable } from './PodsTable';
import { PodsToolbar } from './PodsToolbar';

export function PodsPage({ poll }: { poll: boolean }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const selectedId = useNavigation((s) => s.selectedId);
  const select = useNavigation((s) => s.select);
  const setView = useNavigation((s) => s.setView);
  const setDetailTab = useNavigation((s) => s.setDetailTab);
  const filters = usePodsUi((s) => s.filters);
  const checked = usePodsUi((s) => s.checked);
  const clearChecks = usePodsUi((s) => s.setChecked);
  const pods = useQuery(podsQuery(client, endpointId, poll));
  const endpoint = useCurrentEndpoint();
  const all = useMemo(() => pods.data ?? [], [pods.data]);
  const shown = useMemo(() => filterPods(all, filters), [all, filters]);
  const checkedPods = all.filter((p) => checked.has(p.id));
  const selected = all.find((p) => p.id === selectedId);
  const byPod = useContainersByPod(client, endpointId, poll);
  const containerCounts = useMemo(() => {
    const m = new Map<string, [number, number]>();
    for (const [pod, list] of byPod) m.set(pod, [list.filter((c) => c.state === 'CONTAINER_RUNNING').length, list.length]);
    return m;
  }, [byPod]);

  return (
    <div className={all.length === 0 ? 'pods-page pods-page-empty' : 'pods-page'}>
      <div className="pods-top">
        <PodsToolbar
          pods={all}
          shown={shown.length}
          actions={
            checkedPods.length > 0 && (
              <div className="bulk">
                <span className="bulk-count">{checkedPods.length} selected</span>
                <PodActions pods={checkedPods} onRemoved={() => clearChecks([])} />
              </div>
            )
          }
        />
        {pods.isError ? (
          <div className="pad">
            <ErrorView error={pods.error} title="Could not list sandboxes" />
          </div>
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
            A sandbox is a network namespace, the CNI plugins' work on it and a pause container. Create one to see every plugin call,
            the IP it got and why, its host ports and its bandwidth limits. You can also import a crictl pod config.
          </EmptyState>
        ) : shown.length === 0 ? (
          <EmptyState title="No sandbox matches these filters" action={<button type="button" className="btn" onClick={() => usePodsUi.getState().clearFilters()}>Clear filters</button>} />
        ) : (
          <PodsTable
            pods={shown}
            selectedId={selectedId}
            onSelect={select}
            onOpen={(id) => { select(id); setDetailTab('overview'); }}
            hostPortsListed={endpoint?.kind !== 'cri'}
            containerCounts={containerCounts}
          />
        )}
      </div>
      <div className="pods-detail">
        {selected ? (
          <PodDetail summary={selected} containers={byPod.get(selected.id) ?? []} />
        ) : (
          all.length > 0 && <div className="detail-placeholder muted">Select a sandbox to see its namespace, network, CNI trace and lifecycle. ↑/↓ move through the list.</div>
        )}
      </div>
    </div>
  );
}
