/**
 * The pods list: a virtualized grid (thousands of sandboxes stay smooth), keyboard-driven like a file manager:
 * ↑/↓ (or j/k) move, Home/End jump, Space toggles the row's checkbox, Enter opens the detail.
 */
import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { age, shortId } from '../../../lib/format';
import { useNow } from '../../../lib/use-now';
import { StatePill } from '../../../lib/ui/StatusPill';
import { usePodsUi } from '../store';
import { HostPortClashMark, useHostPortClashes } from './HostPortClash';

const ROW_HEIGHT = 30;
const EMPTY: SandboxSummary[] = [];

export const COLUMNS = [
  '',
  'Name',
  'Namespace',
  'State',
  'Containers',
  'Pod IP',
  'Additional IPs',
  'Host ports',
  'Bandwidth',
  'Age',
] as const;

function hostPorts(p: SandboxSummary): string {
  return p.hostPorts.map((h) => `${h.hostIP ? `${h.hostIP}:` : ''}${h.hostPort}→${h.containerPort}/${h.protocol}`).join(', ');
}

function bandwidth(p: SandboxSummary): string {
  const parts = [
    p.bandwidth.ingress && `↓${p.bandwidth.ingress.replace('bit/s', '')}`,
    p.bandwidth.egress && `↑${p.bandwidth.egress.replace('bit/s', '')}`,
  ].filter(Boolean);
  return parts.join(' ');
}

/**
 * Stopping a sandbox runs CNI DEL: portmap removes its DNAT rules and bandwidth its qdiscs, so a NotReady pod's host
 * ports and limits are only what its config asked for (docs/semantics.md#stop-sandbox).
 */
const RELEASED = 'released at stop';
const RELEASED_TITLE =
  'The sandbox is not ready: CNI DEL at stop removed these host ports and bandwidth limits; this is what its config asked for.';

function Released({ text }: { text: string }) {
  return (
    <span className="released" title={`${text} — ${RELEASED_TITLE}`}>
      {/* the note first: in a narrow column it is the part that must stay readable */}
      <span className="released-note">{RELEASED}:</span> <s>{text}</s>
    </span>
  );
}

function containerCount(c: [number, number] | undefined): React.ReactNode {
  if (!c || c[1] === 0) return <span className="muted">0</span>;
  return c[0] === c[1] ? String(c[1]) : `${c[0]}/${c[1]}`;
}

/** An old or partial CRI runtime answers ListContainers with Unimplemented: its pods are listed without containers. */
const CONTAINERS_UNAVAILABLE = 'this runtime does not serve ListContainers: its containers are unavailable';

/** CRI's ListPodSandbox carries no port mappings: over CRI the list cannot know host ports, only the detail can. */
const HOST_PORTS_UNLISTED = 'ListPodSandbox does not carry port mappings over CRI; open the sandbox to see them (read from its config)';

export function PodsTable({
  pods,
  selectedId,
  onSelect,
  onOpen,
  hostPortsListed = true,
  containerCounts,
  containersUnavailable = false,
  clashes: clashesOverAll,
  onShownRows,
}: {
  pods: SandboxSummary[];
  selectedId?: string;
  onSelect: (id: string) => void;
  onOpen: (id: string) => void;
  /** false for CRI endpoints, whose list has no port mappings */
  hostPortsListed?: boolean;
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
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // ↑/↓ work without a click first: the list takes the focus when it appears, unless something else has it
  useEffect(() => {
    if (!document.activeElement || document.activeElement === document.body) scrollRef.current?.focus({ preventScroll: true });
  }, []);
  const now = useNow(1000);
  const clashesOverShown = useHostPortClashes(clashesOverAll ? EMPTY : pods);
  const clashes = clashesOverAll ?? clashesOverShown;
  const checked = usePodsUi((s) => s.checked);
  const toggle = usePodsUi((s) => s.toggle);
  const setChecked = usePodsUi((s) => s.setChecked);
  const virtualizer = useVirtualizer({
    count: pods.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 6,
    // jsdom and the first paint have no layout; assume a viewport so rows render at once
    initialRect: { width: 1200, height: 600 },
  });
  const rendered = virtualizer.getVirtualItems();
  const renderedIds = rendered.map((v) => pods[v.index]?.id ?? '').join(',');
  useEffect(() => {
    onShownRows?.(renderedIds ? renderedIds.split(',') : []);
  }, [renderedIds, onShownRows]);
  const index = pods.findIndex((p) => p.id === selectedId);
  const allChecked = pods.length > 0 && pods.every((p) => checked.has(p.id));

  const go = (i: number) => {
    const p = pods[Math.max(0, Math.min(pods.length - 1, i))];
    if (!p) return;
    onSelect(p.id);
    virtualizer.scrollToIndex(pods.indexOf(p), { align: 'auto' });
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.target instanceof HTMLInputElement) return;
    const keys: Record<string, () => void> = {
      ArrowDown: () => go(index + 1),
      j: () => go(index + 1),
      ArrowUp: () => go(index < 0 ? 0 : index - 1),
      k: () => go(index < 0 ? 0 : index - 1),
      Home: () => go(0),
      End: () => go(pods.length - 1),
      PageDown: () => go(index + 15),
      PageUp: () => go(index - 15),
      ' ': () => selectedId && toggle(selectedId),
      Enter: () => selectedId && onOpen(selectedId),
    };
    const f = keys[e.key];
    if (f) {
      e.preventDefault();
      f();
    }
  };

  return (
    <div className="grid" role="grid" aria-label="Pod sandboxes" aria-rowcount={pods.length + 1} aria-multiselectable="true">
      <div className="grid-row grid-head" role="row" aria-rowindex={1}>
        <div role="columnheader" className="cell cell-check">
          <input
            type="checkbox"
            aria-label="Select all"
            checked={allChecked}
            onChange={() => setChecked(allChecked ? [] : pods.map((p) => p.id))}
          />
        </div>
        {COLUMNS.slice(1).map((c) => (
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
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {rendered.map((v) => {
            const p = pods[v.index]!;
            const selected = p.id === selectedId;
            const live = p.state === 'SANDBOX_READY';
            return (
              <div
                key={p.id}
                id={`pod-row-${p.id}`}
                role="row"
                aria-rowindex={v.index + 2}
                aria-selected={selected}
                data-pod-name={p.metadata.name}
                className={`grid-row${selected ? ' grid-row-selected' : ''}${p.state !== 'SANDBOX_READY' ? ' grid-row-dim' : ''}`}
                style={{ transform: `translateY(${v.start}px)`, height: ROW_HEIGHT }}
                onClick={() => onSelect(p.id)}
                onDoubleClick={() => onOpen(p.id)}
              >
                <div role="gridcell" className="cell cell-check" onClick={(e) => e.stopPropagation()}>
                  <input
                    type="checkbox"
                    aria-label={`Select ${p.metadata.name}`}
                    checked={checked.has(p.id)}
                    onChange={() => toggle(p.id)}
                  />
                </div>
                <div role="gridcell" className="cell cell-name" title={p.id}>
                  <span className="name">{p.metadata.name}</span>
                  <span className="id mono">{shortId(p.id)}</span>
                </div>
                <div role="gridcell" className="cell">
                  {p.metadata.namespace}
                </div>
                <div role="gridcell" className="cell">
                  <StatePill state={p.state} reason={p.notReadyReason} pending={!!p.cleanupPending?.length} />
                </div>
                <div role="gridcell" className="cell mono" data-col="containers" title="running / all containers">
                  {containersUnavailable ? (
                    <span className="muted small" title={CONTAINERS_UNAVAILABLE}>
                      n/a
                    </span>
                  ) : containerCounts ? (
                    containerCount(containerCounts.get(p.id))
                  ) : (
                    <span className="muted">…</span>
                  )}
                </div>
                <div role="gridcell" className="cell mono" data-col="ip">
                  {p.hostNetwork ? <span className="muted">host network</span> : p.ip || <span className="muted">—</span>}
                </div>
                <div role="gridcell" className="cell mono">
                  {p.additionalIps.join(', ') || <span className="muted">—</span>}
                </div>
                <div role="gridcell" className="cell mono" data-col="host-ports" data-released={!live && hostPorts(p) ? 'true' : undefined}>
                  {clashes.has(p.id) && <HostPortClashMark />}
                  {(hostPorts(p) && !live ? <Released text={hostPorts(p)} /> : hostPorts(p)) ||
                    (hostPortsListed || p.hostNetwork ? (
                      <span className="muted">—</span>
                    ) : (
                      <span className="muted small" title={HOST_PORTS_UNLISTED}>
                        in detail
                      </span>
                    ))}
                </div>
                <div role="gridcell" className="cell mono" data-col="bandwidth" data-released={!live && bandwidth(p) ? 'true' : undefined}>
                  {(bandwidth(p) && !live ? <Released text={bandwidth(p)} /> : bandwidth(p)) || <span className="muted">—</span>}
                </div>
                <div role="gridcell" className="cell mono" title={p.createdAt}>
                  {age(p.createdAt, now)}
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
