/**
 * The pod's wiring as the kernel has it now, drawn in columns: pod netns interfaces → host veth peers (+ the ifb
 * bandwidth redirects to) → bridge → host. Every node is a link to its row in the Network tab's tables.
 */
import { useQuery } from '@tanstack/react-query';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import type { PodTopology, TopologyNode } from '../../../../../../shared/domain/topology';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { useNavigation } from '../../../../lib/navigation';
import { ErrorView } from '../../../../lib/ui/ErrorView';

const COLUMNS: Array<{ kinds: TopologyNode['kind'][]; title: string }> = [
  { kinds: ['pod-if'], title: 'pod netns' },
  { kinds: ['host-veth', 'ifb'], title: 'host: veth peer · ifb' },
  { kinds: ['bridge'], title: 'bridge' },
  { kinds: ['host'], title: 'host' },
];
const W = 220;
const H = 74;
const GAP_X = 60;
const GAP_Y = 16;
const TOP = 26;

export interface Placed { node: TopologyNode; x: number; y: number }

/** Columns by kind, rows in reading order; pure so it can be tested. */
export function layout(t: Pick<PodTopology, 'nodes'>): { placed: Placed[]; width: number; height: number } {
  const placed: Placed[] = [];
  let rows = 0;
  COLUMNS.forEach((col, ci) => {
    // in column order of kinds (veth before ifb), loopback last, then by name
    const nodes = t.nodes.filter((n) => col.kinds.includes(n.kind)).sort((a, b) => col.kinds.indexOf(a.kind) - col.kinds.indexOf(b.kind) || (a.name === 'lo' ? 1 : 0) - (b.name === 'lo' ? 1 : 0) || a.name.localeCompare(b.name));
    nodes.forEach((node, ri) => placed.push({ node, x: ci * (W + GAP_X), y: TOP + ri * (H + GAP_Y) }));
    rows = Math.max(rows, nodes.length);
  });
  return { placed, width: COLUMNS.length * (W + GAP_X) - GAP_X, height: TOP + Math.max(1, rows) * (H + GAP_Y) };
}

/** Scrolls to the node's row in the Network tab (CNI result table first, then the live netns table) and marks it. */
function showRow(n: TopologyNode, setTab: (t: 'network') => void) {
  setTab('network');
  window.setTimeout(() => {
    const sel = [`[data-testid="interfaces"] tr[data-iface="${CSS.escape(n.name)}"]`, `[data-testid="live-interfaces"] tr[data-iface="${CSS.escape(n.name)}"]`];
    const row = sel.map((s) => document.querySelector<HTMLElement>(s)).find(Boolean);
    if (!row) return;
    row.scrollIntoView({ block: 'center', behavior: 'smooth' });
    row.classList.add('row-highlight');
    window.setTimeout(() => row.classList.remove('row-highlight'), 2500);
  }, 0);
}

function Node({ p, onOpen }: { p: Placed; onOpen: () => void }) {
  const n = p.node;
  const up = n.kind === 'host' || n.adminUp;
  const addr = n.addresses.filter((a) => a.scope !== 'link').map((a) => `${a.address}/${a.prefixLen}`);
  const line2 = [n.mac, n.mtu !== undefined ? `mtu ${n.mtu}` : undefined].filter(Boolean).join(' · ');
  const line3 = [n.state, n.hairpin !== undefined ? `hairpin ${n.hairpin ? 'on' : 'off'}` : undefined, n.master ? `port of ${n.master}` : undefined].filter(Boolean).join(' · ');
  return (
    <g
      transform={`translate(${p.x},${p.y})`}
      className={`topo-node topo-${n.kind}${up ? '' : ' topo-down'}`}
      data-testid={`topo-node-${n.kind}-${n.name}`}
      role="link"
      tabIndex={0}
      aria-label={`${n.name}: show its row in the Network tab`}
      onClick={onOpen}
      onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && onOpen()}
    >
      <rect width={W} height={H} rx={6} />
      <text x={8} y={16} className="topo-name">{n.name}{n.linkKind ? ` (${n.linkKind})` : ''}{up ? '' : ' — DOWN'}</text>
      <text x={8} y={32} className="topo-sub">{addr.slice(0, 2).join(', ') || (n.kind === 'host' ? 'host network stack' : 'no address')}</text>
      <text x={8} y={48} className="topo-sub">{line2}</text>
      <text x={8} y={64} className="topo-sub">{line3}</text>
    </g>
  );
}

export function TopologyView({ s }: { s: SandboxStatus }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const setTab = useNavigation((st) => st.setDetailTab);
  const ready = s.state === 'SANDBOX_READY' && !s.hostNetwork && !s.netnsClosed;
  const q = useQuery({
    queryKey: ['ep', endpointId, 'topology', s.id],
    queryFn: () => client.call('sandbox.topology', { endpointId, id: s.id }),
    enabled: ready && caps.liveNetwork,
    refetchInterval: false,
  });
  const t = q.data;
  const { placed, width, height } = layout(t ?? { nodes: [] });
  const at = new Map(placed.map((p) => [p.node.key, p]));
  return (
    <section className="live" data-testid="topology" aria-label="Topology">
      <header className="live-head">
        <span className="live-badge" aria-hidden>kernel</span>
        <h3>How the pod is wired</h3>
        <span className="toolbar-spacer" />
        {t && <span className="live-when small muted" data-testid="topo-measured-at" title={t.measuredAt}>read from the kernel at <b className="mono">{new Date(t.measuredAt).toLocaleTimeString(undefined, { hour12: false })}</b></span>}
        {ready && caps.liveNetwork && <button type="button" className="btn btn-small" onClick={() => void q.refetch()} disabled={q.isFetching}>{q.isFetching ? 'Reading…' : 'Refresh'}</button>}
      </header>
      <div className="live-sub small muted"><span className="mono">ip -j -d addr</span> in the netns and on the host, <span className="mono">bridge -j link</span>; the veth peer is matched by ifindex. Click a node for its row below.</div>
      {!caps.liveNetwork ? (
        <div className="live-note">Not available from this runtime: reading the kernel needs Podscope's own engine.</div>
      ) : !ready ? (
        <div className="live-note" data-testid="topo-not-ready">The pod is not ready: nothing is wired to draw.</div>
      ) : q.isError ? (
        <ErrorView error={q.error} title="Could not read the topology" />
      ) : !t ? (
        <div className="live-note muted">Reading the kernel…</div>
      ) : (
        <div className="topo-scroll">
          {t.errors.length > 0 && <div className="callout callout-warn small">{t.errors.join('; ')}</div>}
          <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} className="topo" role="img" aria-label="pod network topology">
            {COLUMNS.map((c, i) => (
              <text key={c.title} x={i * (W + GAP_X)} y={14} className="topo-col">{c.title}</text>
            ))}
            {t.edges.map((e) => {
              const a = at.get(e.from);
              const b = at.get(e.to);
              if (!a || !b) return null;
              const sameCol = a.x === b.x;
              const x1 = a.x + W;
              const y1 = a.y + H / 2;
              const x2 = sameCol ? b.x + W : b.x;
              const y2 = b.y + H / 2;
              const d = sameCol ? `M${x1},${y1} C${x1 + 40},${y1} ${x2 + 40},${y2} ${x2},${y2}` : `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}`;
              return <path key={`${e.from}>${e.to}`} d={d} className={`topo-edge topo-edge-${e.kind}`} data-testid={`topo-edge-${e.kind}`}><title>{e.kind}</title></path>;
            })}
            {placed.map((p) => <Node key={p.node.key} p={p} onOpen={() => showRow(p.node, setTab)} />)}
          </svg>
        </div>
      )}
    </section>
  );
}
