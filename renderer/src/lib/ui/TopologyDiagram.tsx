/**
 * A hand-laid SVG of a network topology read from the kernel: columns pod netns → host links (veth peers, parents,
 * ifbs) → bridges → the host stack, only the columns that hold something. Each edge kind has its own stroke and a
 * label (kind, and the plugin that made it); each node a badge with its owner plugin. Every node is a link
 * (`onOpen`); the caller decides where to. A caller may mark nodes (`marks`: the narrow link of a measured path) with
 * a coloured outline and a badge under the node saying what was found there; the tooltip says why.
 */
import type { TopologyEdge, TopologyNode } from '../../../../shared/domain/topology';

const COLUMNS: Array<{ kinds: TopologyNode['kind'][]; title: string }> = [
  { kinds: ['pod-if', 'host-device'], title: 'pod netns' },
  { kinds: ['host-veth', 'host-link', 'ifb'], title: 'host: veth peer · parent · ifb' },
  { kinds: ['bridge'], title: 'bridge' },
  { kinds: ['host'], title: 'host stack' },
];
const W = 250;
const H = 74;
const GAP_X = 120;
const GAP_Y = 18;
const TOP = 26;

/** what each edge kind stands for, in the legend and the edge's tooltip */
export const EDGE_MEANING: Record<TopologyEdge['kind'], string> = {
  veth: 'veth pair',
  'bridge-port': 'port of a bridge',
  'vrf-port': 'enslaved to a vrf',
  master: 'enslaved to a master',
  parent: 'macvlan/ipvlan/vlan on its parent link',
  route: "the host's route to the pod address through this link",
  redirect: 'tc redirect of the ingress to another device',
  'host-stack': "the bridge's address: the host answers there",
};

/** something measured about a node, drawn on it: `bad` fails a path (red), `warn` is shown but fails nothing (amber) */
export interface NodeMark {
  tone: 'bad' | 'warn';
  /** the badge's text, a few words: "black hole · MTU 1400" */
  label: string;
  /** the tooltip: why */
  title: string;
}

export interface Placed {
  node: TopologyNode;
  x: number;
  y: number;
}

/** Columns by kind (empty ones left out), rows in reading order; pure so it can be tested. */
export function layout(t: { nodes: TopologyNode[] }): { placed: Placed[]; width: number; height: number; columns: string[] } {
  const placed: Placed[] = [];
  const columns: string[] = [];
  let rows = 0;
  for (const col of COLUMNS) {
    // in column order of kinds (veth before ifb), loopback last, then by name
    const nodes = t.nodes
      .filter((n) => col.kinds.includes(n.kind))
      .sort(
        (a, b) =>
          col.kinds.indexOf(a.kind) - col.kinds.indexOf(b.kind) ||
          (a.name === 'lo' ? 1 : 0) - (b.name === 'lo' ? 1 : 0) ||
          (a.sandboxId ?? '').localeCompare(b.sandboxId ?? '') ||
          a.name.localeCompare(b.name),
      );
    if (nodes.length === 0) continue;
    const ci = columns.length;
    columns.push(col.title);
    nodes.forEach((node, ri) => placed.push({ node, x: ci * (W + GAP_X), y: TOP + ri * (H + GAP_Y) }));
    rows = Math.max(rows, nodes.length);
  }
  return {
    placed,
    columns,
    width: Math.max(1, columns.length) * (W + GAP_X) - GAP_X + 60,
    height: TOP + Math.max(1, rows) * (H + GAP_Y),
  };
}

function OwnerBadge({ owner, x, y }: { owner: NonNullable<TopologyNode['owner']>; x: number; y: number }) {
  const w = owner.plugin.length * 6.2 + 10;
  return (
    <g transform={`translate(${x - w},${y})`} className="topo-owner" data-testid="topo-owner">
      <title>{`created by the ${owner.plugin} plugin of network ${owner.network} (from its recorded ADD result, not the kernel)`}</title>
      <rect width={w} height={15} rx={7} />
      <text x={5} y={11}>
        {owner.plugin}
      </text>
    </g>
  );
}

function MarkBadge({ mark }: { mark: NodeMark }) {
  const w = mark.label.length * 6.2 + 12;
  // straddles the node's bottom edge, right-aligned: the node's own lines stay readable above it
  return (
    <g transform={`translate(${W - 6 - w},${H - 7})`} className={`topo-mark-badge topo-mark-badge-${mark.tone}`} data-testid="topo-mark">
      <title>{mark.title}</title>
      <rect width={w} height={15} rx={7} />
      <text x={6} y={11}>
        {mark.label}
      </text>
    </g>
  );
}

function Node({ p, onOpen, mark }: { p: Placed; onOpen: () => void; mark?: NodeMark }) {
  const n = p.node;
  const up = n.kind === 'host' || n.adminUp;
  const addr = n.addresses.filter((a) => a.scope !== 'link').map((a) => `${a.address}/${a.prefixLen}`);
  const line2 = [n.mac, n.mtu !== undefined ? `mtu ${n.mtu}` : undefined].filter(Boolean).join(' · ');
  const line3 = [
    n.state,
    n.hairpin !== undefined ? `hairpin ${n.hairpin ? 'on' : 'off'}` : undefined,
    n.master ? `port of ${n.master}` : undefined,
    n.mode ? `mode ${n.mode}` : undefined,
    n.vlanId !== undefined ? `vlan ${n.vlanId}` : undefined,
    n.originalName ? `was ${n.originalName} on the host` : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <g
      transform={`translate(${p.x},${p.y})`}
      className={`topo-node topo-${n.kind}${up ? '' : ' topo-down'}${mark ? ` topo-mark-${mark.tone}` : ''}`}
      data-testid={`topo-node-${n.kind}-${n.name}`}
      data-owner={n.owner?.plugin}
      data-mark={mark?.tone}
      role="link"
      tabIndex={0}
      aria-label={`${n.name}${mark ? ` (${mark.label})` : ''}: show its row in the Network tab`}
      onClick={onOpen}
      onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && onOpen()}
    >
      {mark && <title>{mark.title}</title>}
      <rect width={W} height={H} rx={6} />
      <text x={8} y={16} className="topo-name">
        {n.name}
        {n.linkKind ? ` (${n.linkKind})` : ''}
        {up ? '' : ' — DOWN'}
      </text>
      {n.owner && <OwnerBadge owner={n.owner} x={W - 4} y={4} />}
      <text x={8} y={32} className="topo-sub">
        {addr.slice(0, 2).join(', ') || (n.kind === 'host' ? 'host network stack' : 'no address')}
      </text>
      <text x={8} y={48} className="topo-sub">
        {line2}
      </text>
      <text x={8} y={64} className="topo-sub">
        {line3}
      </text>
      {mark && <MarkBadge mark={mark} />}
    </g>
  );
}

export function TopologyDiagram({
  nodes,
  edges,
  onOpen,
  label,
  marks,
}: {
  nodes: TopologyNode[];
  edges: TopologyEdge[];
  onOpen: (n: TopologyNode) => void;
  label: string;
  /** node id → what was measured there */
  marks?: ReadonlyMap<string, NodeMark>;
}) {
  const { placed, width, height, columns } = layout({ nodes });
  const at = new Map(placed.map((p) => [p.node.id, p]));
  const kinds = [...new Set(edges.map((e) => e.kind))];
  return (
    <div className="stack-s">
      <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} className="topo" role="img" aria-label={label}>
        {columns.map((title, i) => (
          <text key={title} x={i * (W + GAP_X)} y={14} className="topo-col">
            {title}
          </text>
        ))}
        {edges.map((e) => {
          const a = at.get(e.from);
          const b = at.get(e.to);
          if (!a || !b) return null;
          const sameCol = a.x === b.x;
          const x1 = a.x + W;
          const y1 = a.y + H / 2;
          const x2 = sameCol ? b.x + W : b.x;
          const y2 = b.y + H / 2;
          const d = sameCol
            ? `M${x1},${y1} C${x1 + 50},${y1} ${x2 + 50},${y2} ${x2},${y2}`
            : `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}`;
          const mx = sameCol ? x1 + 40 : (x1 + x2) / 2;
          const my = (y1 + y2) / 2;
          const tip = `${e.kind}: ${EDGE_MEANING[e.kind]}${e.detail ? ` — ${e.detail}` : ''}${e.owner ? ` (by ${e.owner.plugin} of ${e.owner.network})` : ''}`;
          return (
            <g key={`${e.from}>${e.to}>${e.kind}>${e.detail ?? ''}`} data-owner={e.owner?.plugin}>
              <path d={d} className={`topo-edge topo-edge-${e.kind}`} data-testid={`topo-edge-${e.kind}`}>
                <title>{tip}</title>
              </path>
              <text x={mx} y={my - 4} textAnchor="middle" className={`topo-edge-label topo-edge-label-${e.kind}`}>
                <title>{tip}</title>
                {e.kind}
              </text>
              {e.owner && (
                <text x={mx} y={my + 9} textAnchor="middle" className="topo-edge-owner">
                  {e.owner.plugin}
                </text>
              )}
            </g>
          );
        })}
        {placed.map((p) => (
          <Node key={p.node.id} p={p} onOpen={() => onOpen(p.node)} mark={marks?.get(p.node.id)} />
        ))}
      </svg>
      {kinds.length > 0 && (
        <ul className="topo-legend small" data-testid="topo-legend">
          {kinds.map((k) => (
            <li key={k}>
              <svg width={34} height={10} aria-hidden>
                <path d="M1,5 L33,5" className={`topo-edge topo-edge-${k}`} />
              </svg>
              <b className="mono">{k}</b> {EDGE_MEANING[k]}
            </li>
          ))}
          <li className="muted">
            <span className="topo-owner-key">plugin</span> the plugin that created it, from the pod&apos;s recorded CNI results (everything
            else is read from the kernel)
          </li>
        </ul>
      )}
    </div>
  );
}
