/**
 * The pods list: a virtualized grid (thousands of sandboxes stay smooth), keyboard-driven like a file manager:
 * ↑/↓ (or j/k) move, Home/End jump, Space toggles the row's checkbox, Enter opens the detail (use-pods-grid.ts).
 */
import { useMemo } from 'react';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { useNow } from '../../../lib/use-now';
import { usePodsGrid } from '../model/use-pods-grid';
import { usePodsUi } from '../store';
import { useHostPortClashes } from './HostPortClash';
import { PodRow } from './PodRow';
import type { RowNode } from '../model/nodes';

const EMPTY: SandboxSummary[] = [];

export const COLUMNS = [
  '',
  'Name',
  'Namespace',
  'Node',
  'State',
  'Network',
  'Containers',
  'Pod IP',
  'Additional IPs',
  'Host ports',
  'Bandwidth',
  'Age',
] as const;

export function PodsTable({
  pods,
  selectedId,
  onSelect,
  onOpen,
  hostPortsListed = true,
  probeable = true,
  containerCounts,
  containersUnavailable = false,
  clashes: clashesOverAll,
  onShownRows,
  nodes,
}: {
  pods: SandboxSummary[];
  selectedId?: string;
  onSelect: (id: string) => void;
  onOpen: (id: string) => void;
  /** false for CRI endpoints, whose list has no port mappings */
  hostPortsListed?: boolean;
  /** the endpoint's pods can be probed from here (the network column) */
  probeable?: boolean;
  /** pod id ⇒ [running, all] containers; absent while unknown */
  containerCounts?: Map<string, [number, number]>;
  /** the runtime does not serve ListContainers: the column says so instead of waiting */
  containersUnavailable?: boolean;
  /** the ids of the rows rendered now (the viewport and its overscan), whenever they change */
  onShownRows?: (ids: string[]) => void;
  /**
   * ids of ready pods sharing a host port with another one, worked out over the whole list by the caller (once per
   * list change, not per filter keystroke; a clash exists whether or not the filter shows both); default: over `pods`
   */
  clashes?: Set<string>;
  /**
   * the pods of several nodes: each pod's node (its name in the Node column when `column`, and what its runtime gives
   * the row's cells, in place of the endpoint-wide flags above)
   */
  nodes?: { of: Map<string, string>; rows: Map<string, RowNode>; column: boolean };
}) {
  const now = useNow(1000);
  const clashesOverShown = useHostPortClashes(clashesOverAll ? EMPTY : pods);
  const clashes = clashesOverAll ?? clashesOverShown;
  const checked = usePodsUi((s) => s.checked);
  const toggle = usePodsUi((s) => s.toggle);
  const setChecked = usePodsUi((s) => s.setChecked);
  const { scrollRef, rendered, totalSize, onKeyDown } = usePodsGrid({ pods, selectedId, onSelect, onOpen, onToggle: toggle, onShownRows });
  const allChecked = pods.length > 0 && pods.every((p) => checked.has(p.id));
  const nodeColumn = nodes?.column === true;
  const columns = COLUMNS.slice(1).filter((c) => c !== 'Node' || nodeColumn);
  const nodeLabels = nodeColumn ? [...(nodes?.rows.values() ?? [])].map((n) => n.label).join('\n') : '';
  const nodeCol = useMemo(() => (nodeLabels ? nodeColumnWidth(nodeLabels.split('\n')) : undefined), [nodeLabels]);
  return (
    <div
      className={nodeColumn ? 'grid grid-with-node' : 'grid'}
      style={nodeCol ? ({ '--node-col': `${nodeCol}px` } as React.CSSProperties) : undefined}
      role="grid"
      aria-label="Pod sandboxes"
      aria-rowcount={pods.length + 1}
      aria-multiselectable="true"
    >
      <div className="grid-row grid-head" role="row" aria-rowindex={1}>
        <div role="columnheader" className="cell cell-check">
          <input
            type="checkbox"
            aria-label="Select all"
            checked={allChecked}
            onChange={() => setChecked(allChecked ? [] : pods.map((p) => p.id))}
          />
        </div>
        {columns.map((c) => (
          <div role="columnheader" className="cell" key={c}>
            {c}
          </div>
        ))}
      </div>
      <div
        className="grid-body"
        ref={scrollRef}
        tabIndex={0}
        onKeyDown={onKeyDown}
        aria-activedescendant={selectedId ? `pod-row-${selectedId}` : undefined}
        data-testid="pods-grid-body"
        data-page-focus
      >
        <div style={{ height: totalSize, position: 'relative' }}>
          {rendered.map((v) => {
            const p = pods[v.index]!;
            const node = nodes?.rows.get(nodes.of.get(p.id) ?? '');
            return (
              <PodRow
                key={p.id}
                pod={p}
                rowIndex={v.index + 2}
                top={v.start}
                selected={p.id === selectedId}
                checked={checked.has(p.id)}
                onToggle={() => toggle(p.id)}
                onSelect={() => onSelect(p.id)}
                onOpen={() => onOpen(p.id)}
                clash={clashes.has(p.id)}
                containers={
                  (node?.containersUnavailable ?? containersUnavailable)
                    ? 'unavailable'
                    : containerCounts
                      ? containerCounts.get(p.id)
                      : 'unknown'
                }
                hostPortsListed={node?.hostPortsListed ?? hostPortsListed}
                probeable={node?.probeable ?? probeable}
                node={node}
                nodeColumn={nodeColumn}
                now={now}
              />
            );
          })}
        </div>
      </div>
    </div>
  );
}

let measureCtx: CanvasRenderingContext2D | null | undefined;

/**
 * The Node track's width: the longest listed node name as the grid's font draws it, plus the cell's padding (never
 * below the header's; at most 240px, so the Name keeps its room: a longer name is cut, whole in its tooltip). A canvas measures it where there is one (not under jsdom, whose
 * canvas is a stub); else about 7.3px a character at 13px.
 */
export function nodeColumnWidth(labels: string[]): number {
  if (measureCtx === undefined) {
    measureCtx = null;
    if (typeof document !== 'undefined' && !/jsdom/i.test(navigator.userAgent)) {
      measureCtx = document.createElement('canvas').getContext('2d');
      if (measureCtx) measureCtx.font = `13px ${getComputedStyle(document.documentElement).getPropertyValue('--font') || 'sans-serif'}`;
    }
  }
  const width = (t: string) => (measureCtx ? measureCtx.measureText(t).width : t.length * 7.3);
  const longest = Math.max(0, ...labels.map(width));
  // 16px of the cell's padding, a few more so a name that measures to the pixel is not cut by rounding
  return Math.min(240, Math.max(96, Math.ceil(longest) + 20));
}
