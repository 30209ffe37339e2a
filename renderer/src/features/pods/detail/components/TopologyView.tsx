/**
 * The pod's wiring as the kernel had it when read, drawn in columns: pod netns interfaces → host veth peers, parents
 * and the ifb bandwidth redirects to → bridge → host stack. Every node is a link to its row in the Network tab's tables.
 * The narrow links the last probe's MTU audit found are marked on it, with their MTU and why (model/narrow-links.ts).
 */
import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import type { TopologyNode } from '../../../../../../shared/domain/topology';
import { queryKeys } from '../../../../lib/query-keys';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { useNavigation } from '../../../../lib/navigation';
import { scrollBehavior } from '../../../../lib/motion';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { TopologyDiagram, type NodeMark } from '../../../../lib/ui/TopologyDiagram';
import { useLastProbe } from '../api/use-reachability';
import { hhmmss } from '../model/reachability';
import { narrowLinkMarks, narrowLinkPlace, type NarrowMark } from '../model/narrow-links';

/** Scrolls to the node's row in the Network tab (CNI result table first, then the live netns table) and marks it. */
function showRow(n: TopologyNode, setTab: (t: 'network') => void) {
  setTab('network');
  window.setTimeout(() => {
    const sel = [
      `[data-testid="interfaces"] tr[data-iface="${CSS.escape(n.name)}"]`,
      `[data-testid="live-interfaces"] tr[data-iface="${CSS.escape(n.name)}"]`,
    ];
    const row = sel.map((s) => document.querySelector<HTMLElement>(s)).find(Boolean);
    if (!row) return;
    row.scrollIntoView({ block: 'center', behavior: scrollBehavior() });
    row.classList.add('row-highlight');
    window.setTimeout(() => row.classList.remove('row-highlight'), 2500);
  }, 0);
}

export function TopologyView({ s }: { s: SandboxStatus }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const setTab = useNavigation((st) => st.setDetailTab);
  const ready = s.state === 'SANDBOX_READY' && !s.hostNetwork && !s.netnsClosed;
  const q = useQuery({
    queryKey: queryKeys.podTopology(endpointId, s.id),
    queryFn: () => client.call('sandbox.topology', { endpointId, id: s.id }),
    enabled: ready && caps.liveNetwork,
    refetchInterval: false,
  });
  // A reading taken while the pod was ready stays in the query cache after it stops: it is history, not the kernel now,
  // so it is neither drawn nor stamped with its time once the pod is not ready.
  const t = ready ? q.data : undefined;
  const probe = useLastProbe(s.id, ready && caps.liveNetwork);
  const narrow = useMemo(() => (t ? narrowLinkMarks(probe, t.nodes, s.id) : []), [probe, t, s.id]);
  const marks = useMemo(
    () =>
      new Map<string, NodeMark>(
        narrow.flatMap((m) =>
          m.nodeId
            ? [
                [
                  m.nodeId,
                  {
                    tone: m.blackHole ? 'bad' : 'warn',
                    label: `${m.blackHole ? 'black hole' : 'narrowest'} · MTU ${m.link.mtu}`,
                    title: m.why,
                  },
                ],
              ]
            : [],
        ),
      ),
    [narrow],
  );
  // the same states as every live section (LivePanel): nothing read is drawn grey
  const state = !caps.liveNetwork ? 'unavailable' : !ready ? 'absent' : q.isError ? 'error' : t ? 'ok' : 'loading';
  return (
    <section className="live" data-testid="topology" data-live-state={state} aria-label="Topology">
      <header className="live-head">
        <span className="live-badge" aria-hidden>
          kernel
        </span>
        <h3>How the pod is wired</h3>
        <span className="toolbar-spacer" />
        {t && (
          <span className="live-when small muted" data-testid="topo-measured-at" title={t.readAt}>
            read from the kernel at <b className="mono">{new Date(t.readAt).toLocaleTimeString(undefined, { hour12: false })}</b>
          </span>
        )}
        {ready && caps.liveNetwork && (
          <button type="button" className="btn btn-small" onClick={() => void q.refetch()} disabled={q.isFetching}>
            {q.isFetching ? 'Reading…' : 'Refresh'}
          </button>
        )}
      </header>
      <div className="live-sub small muted">
        <span className="mono">ip -j -d addr</span> in the netns and on the host, <span className="mono">ip -j route</span>,{' '}
        <span className="mono">bridge -j link</span>, <span className="mono">tc -j filter</span>; a veth peer or a macvlan parent is matched
        by ifindex. Owner badges come from the pod&apos;s recorded CNI results. Click a node for its row below.
      </div>
      {!caps.liveNetwork ? (
        <div className="live-note">Not available from this runtime: reading the kernel needs Podscope's own engine.</div>
      ) : !ready ? (
        <div className="live-note" data-testid="topo-not-ready">
          The pod is not ready: nothing is wired to draw.
        </div>
      ) : q.isError ? (
        <ErrorView error={q.error} title="Could not read the topology" />
      ) : !t ? (
        <div className="live-note muted">Reading the kernel…</div>
      ) : (
        <div className="topo-scroll">
          {t.errors.length > 0 && <div className="callout callout-warn small">{t.errors.join('; ')}</div>}
          {probe && narrow.length > 0 && <NarrowLinks marks={narrow} measuredAt={probe.measuredAt} />}
          <TopologyDiagram nodes={t.nodes} edges={t.edges} label="pod network topology" onOpen={(n) => showRow(n, setTab)} marks={marks} />
        </div>
      )}
    </section>
  );
}

/** The narrow links of the last probe, in words: where, the MTU, why, and the paths through it. */
function NarrowLinks({ marks, measuredAt }: { marks: NarrowMark[]; measuredAt: string }) {
  return (
    <ul
      className={`callout ${marks.some((m) => m.blackHole) ? 'callout-bad' : 'callout-warn'} small topo-narrow`}
      data-testid="topo-narrow"
    >
      {marks.map((m) => (
        <li key={narrowLinkPlace(m.link)} data-black-hole={m.blackHole} data-drawn={m.nodeId ? 'true' : 'false'}>
          <b className="mono">{narrowLinkPlace(m.link)}</b> MTU {m.link.mtu}
          {m.nodeId ? '' : ' (not drawn here)'} — {m.why}.{' '}
          <span className="muted">
            Narrowest link of {m.paths.join('; ')} (probe at {hhmmss(measuredAt)}).
          </span>
        </li>
      ))}
    </ul>
  );
}
