/**
 * One row of the pods list. A NotReady pod's host ports and bandwidth are struck through as "released at stop"; over
 * CRI the list has no port mappings, and a runtime without ListContainers has no container counts: the cells say so.
 */
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { age, shortId } from '../../../lib/format';
import { StatePill } from '../../../lib/ui/StatusPill';
import { ROW_HEIGHT } from '../model/use-pods-grid';
import { HostPortClashMark } from './HostPortClash';
import { NetworkCell } from './NetworkCell';
import type { RowNode } from '../model/nodes';

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

export function PodRow({
  pod: p,
  rowIndex,
  top,
  selected,
  checked,
  onToggle,
  onSelect,
  onOpen,
  clash,
  containers,
  hostPortsListed,
  probeable = true,
  node,
  nodeColumn = false,
  now,
}: {
  pod: SandboxSummary;
  /** aria-rowindex: the header is row 1 */
  rowIndex: number;
  /** offset in the virtual list, px */
  top: number;
  selected: boolean;
  checked: boolean;
  onToggle: () => void;
  onSelect: () => void;
  onOpen: () => void;
  /** a ready pod sharing a host port with another one */
  clash: boolean;
  /** [running, all]; 'unknown' while not known, 'unavailable' when the runtime does not serve ListContainers */
  containers: [number, number] | undefined | 'unknown' | 'unavailable';
  /** false for CRI endpoints, whose list has no port mappings */
  hostPortsListed: boolean;
  /** the endpoint's pods can be probed from here */
  probeable?: boolean;
  /** the node the pod is listed under (several nodes listed) */
  node?: RowNode;
  /** the Node column is shown */
  nodeColumn?: boolean;
  now: number;
}) {
  const live = p.state === 'SANDBOX_READY';
  return (
    <div
      id={`pod-row-${p.id}`}
      role="row"
      aria-rowindex={rowIndex}
      aria-selected={selected}
      data-pod-name={p.metadata.name}
      data-node={node?.label}
      data-stale={node?.stale ? 'true' : undefined}
      className={`grid-row${selected ? ' grid-row-selected' : ''}${p.state !== 'SANDBOX_READY' ? ' grid-row-dim' : ''}${node?.stale ? ' grid-row-stale' : ''}`}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
      onClick={onSelect}
      onDoubleClick={onOpen}
    >
      <div role="gridcell" className="cell cell-check" onClick={(e) => e.stopPropagation()}>
        <input type="checkbox" aria-label={`Select ${p.metadata.name}`} checked={checked} onChange={onToggle} />
      </div>
      <div role="gridcell" className="cell cell-name" title={p.id}>
        <span className="name">{p.metadata.name}</span>
        <span className="id mono">{shortId(p.id)}</span>
      </div>
      <div role="gridcell" className="cell">
        {p.metadata.namespace}
      </div>
      {nodeColumn && (
        <div
          role="gridcell"
          className="cell cell-node"
          data-col="node"
          title={node?.stale ? `${node.label}: not answering, its last list` : node?.label}
        >
          {node?.label ?? <span className="muted">—</span>}
        </div>
      )}
      <div role="gridcell" className="cell">
        <StatePill state={p.state} reason={p.notReadyReason} pending={!!p.cleanupPending?.length} />
      </div>
      <div role="gridcell" className="cell" data-col="network">
        <NetworkCell pod={p} probeable={probeable} endpointId={node?.id} />
      </div>
      <div role="gridcell" className="cell mono" data-col="containers" title="running / all containers">
        {containers === 'unavailable' ? (
          <span className="muted small" title={CONTAINERS_UNAVAILABLE}>
            n/a
          </span>
        ) : containers !== 'unknown' ? (
          containerCount(containers)
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
      <div
        role="gridcell"
        className="cell mono"
        data-col="host-ports"
        data-released={!live && hostPorts(p) ? 'true' : undefined}
        // a narrow column cuts the list: the whole of it on hover
        title={hostPorts(p) || undefined}
      >
        {clash && <HostPortClashMark />}
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
}
