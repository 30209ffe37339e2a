/**
 * The pods list's network column: the pod's network verdict from its last probe (the same rules as the detail's
 * header: green only when measured while ready), with the probe's time in the tooltip. Runtimes whose pods cannot be
 * probed here say n/a.
 */
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { useRowProbe } from '../detail/api/use-reachability';
import { hhmmss } from '../detail/model/reachability';
import { networkVerdict } from '../detail/model/verdict';

export function NetworkCell({ pod, probeable, endpointId }: { pod: SandboxSummary; probeable: boolean; endpointId?: string }) {
  const q = useRowProbe(pod, probeable && !pod.hostNetwork, endpointId);
  if (!probeable)
    return (
      <span className="muted small" title="the probe enters the pod's netns: only Podscope's own engine on this host can">
        n/a
      </span>
    );
  if (pod.hostNetwork) return <span className="muted">—</span>;
  if (q.isPending && pod.state === 'SANDBOX_READY') return <span className="muted">…</span>;
  const v = networkVerdict(pod, q.data);
  const short =
    v.kind === 'failing'
      ? `✗ ${v.failing.length} failing`
      : v.kind === 'reachable'
        ? `✓ ${v.reachable} ok`
        : v.kind === 'shadowed'
          ? `! ${v.shadowed} shadowed`
          : v.kind === 'notReady'
            ? 'no verdict'
            : 'not measured';
  const title = `${v.label}${v.measuredAt ? ` · probe at ${hhmmss(v.measuredAt)}` : ''} — ${v.detail}`;
  return (
    <span className={`net-cell net-${v.tone}`} title={title} data-verdict={v.kind}>
      {short}
    </span>
  );
}
