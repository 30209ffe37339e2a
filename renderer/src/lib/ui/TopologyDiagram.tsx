/**
 * A hand-laid SVG of a network topology read from the kernel: columns pod netns → host veth/ifb → bridge → host,
 * edges for veth pairs, bridge ports, ifb redirects. Every node is a link (`onOpen`); the caller decides where to.
 */
import type { TopologyEdge, TopologyNode } from '../../../../shared/domain/topology';

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

export interface Placed {
  node: TopologyNode;
  x: number;
  y: number;
}

/** Columns by kind, rows in reading order; pure so it can be tested. */
export function layout(t: { nodes: TopologyNode[] }): { placed: Placed[]; width: number; height: number } {
  const placed: Placed[] = [];
  let rows = 0;
  COLUMNS.forEach((col, ci) => {
    // in column order of kinds (veth before ifb), loopback last, then by name
    const nodes = t.nodes
      .filter((n) => col.kinds.includes(n.kind))
      .sort(
        (a, b) =>
          col.kinds.indexOf(a.kind) - col.kinds.indexOf(b.kind) ||
          (a.name === 'lo' ? 1 : 0) - (b.name === 'lo' ? 1 : 0) ||
          a.name.localeCompare(b.name),
      );
    nodes.forEach((node, ri) => placed.push({ node, x: ci * (W + GAP_X), y: TOP + ri * (H + GAP_Y) }));
    rows = Math.max(rows, nodes.length);
  });
  return { placed, width: COLUMNS.length * (W + GAP_X) - GAP_X, height: TOP + Math.max(1, rows) * (H + GAP_Y) };
}

function Node({ p, onOpen }: { p: Placed; onOpen: () => void }) {
  const n = p.node;
  const up = n.kind === 'host' || n.adminUp;
  const addr = n.addresses.filter((a) => a.scope !== 'link').map((a) => `${a.address}/${a.prefixLen}`);
  const line2 = [n.mac, n.mtu !== undefined ? `mtu ${n.mtu}` : undefined].filter(Boolean).join(' · ');
  const line3 = [
    n.state,
    n.hairpin !== undefined ? `hairpin ${n.hairpin ? 'on' : 'off'}` : undefined,
    n.master ? `port of ${n.master}` : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
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
      <text x={8} y={16} className="topo-name">
        {n.name}
        {n.linkKind ? ` (${n.linkKind})` : ''}
        {up ? '' : ' — DOWN'}
      </text>
      <text x={8} y={32} className="topo-sub">
        {addr.slice(0, 2).join(', ') || (n.kind === 'host' ? 'host network stack' : 'no address')}
      </text>
      <text x={8} y={48} className="topo-sub">
        {line2}
      </text>
      <text x={8} y={64} className="topo-sub">
        {line3}
      </text>
    </g>
  );
}

export function TopologyDiagram({
  nodes,
  edges,
  onOpen,
  label,
}: {
  nodes: TopologyNode[];
  edges: TopologyEdge[];
  onOpen: (n: TopologyNode) => void;
  label: string;
}) {
  const { placed, width, height } = layout({ nodes });
  const at = new Map(placed.map((p) => [p.node.key, p]));
  return (
    <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} className="topo" role="img" aria-label={label}>
      {COLUMNS.map((c, i) => (
        <text key={c.title} x={i * (W + GAP_X)} y={14} className="topo-col">
          {c.title}
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
          ? `M${x1},${y1} C${x1 + 40},${y1} ${x2 + 40},${y2} ${x2},${y2}`
          : `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}`;
        return (
          <path key={`${e.from}>${e.to}`} d={d} className={`topo-edge topo-edge-${e.kind}`} data-testid={`topo-edge-${e.kind}`}>
            <title>{e.kind}</title>
          </path>
        );
      })}
      {placed.map((p) => (
        <Node key={p.node.key} p={p} onOpen={() => onOpen(p.node)} />
      ))}
    </svg>
  );
}
