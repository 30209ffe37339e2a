/**
 * The Why panel of one reachability path: the steps its own connection took through the kernel (routes, each
 * netfilter rule it hit, the conntrack entry, where it ended), the way out then the way back, the step that decided
 * the verdict highlighted, who installed each rule as a badge, and each rule copyable as iptables-save prints it.
 */
import type { PathTrace as PathTraceData, ProbePath, RuleOwner, TraceStep } from '../../../../../../shared/domain/probe';
import { useNavigation } from '../../../../lib/navigation';
import '../../../../styles/trace.css';

export function ownerLabel(owner: RuleOwner, nameOf: (id: string) => string | undefined): string {
  return [owner.plugin, owner.network, owner.sandboxId ? `pod ${nameOf(owner.sandboxId) ?? owner.sandboxId.slice(0, 12)}` : undefined]
    .filter(Boolean)
    .join(' · ');
}

/**
 * Where a step happened: the host, this pod, another pod — and on a path across nodes, a node's own netns
 * ("node:<name>") or a pod's with the node it is on, so each step says which node's kernel decided it.
 */
export function netnsLabel(netns: string, sandboxId: string, nameOf: (id: string) => string | undefined, node?: string): string {
  if (netns.startsWith('node:')) return `node ${netns.slice('node:'.length)}`;
  const where = netns === 'host' ? 'host' : netns === sandboxId ? 'this pod' : `pod ${nameOf(netns) ?? netns.slice(0, 12)}`;
  return node ? `${where} on ${node}` : where;
}

function stepTitle(s: TraceStep): string {
  if (s.kind === 'netfilter') return `${s.table}/${s.chain}`;
  return s.kind;
}

function copy(text: string) {
  void navigator.clipboard?.writeText(text).catch(() => undefined);
}

/** a path's seen-at captures (its own flow's packets) as a pcapng file the browser saves */
function downloadPcapng(capture: NonNullable<PathTraceData['capture']>, sandboxId: string, sport: number) {
  const bytes = Uint8Array.from(atob(capture.pcapngBase64), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/vnd.tcpdump.pcap' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `podscope-trace-${sandboxId.slice(0, 12)}-sport-${sport}.pcapng`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function PathTrace({
  path,
  sandboxId,
  nameOf = () => undefined,
  ownerTraces = true,
}: {
  path: ProbePath;
  sandboxId: string;
  nameOf?: (id: string) => string | undefined;
  /** an owner's pod has a CNI trace to open (false for a runtime that records no plugin calls, like containerd) */
  ownerTraces?: boolean;
}) {
  const openPod = useNavigation((s) => s.openPod);
  const trace: PathTraceData | undefined = path.trace;
  if (!trace) return <div className="small muted">This path was not traced.</div>;
  const ok = path.verdict === 'reachable';
  // the path's own flow, not the probe's every flow: what this path's download holds
  const capture = trace.capture;
  // a partial trace names no cause it could not see: what is missing leads, and the verdict is amber, not red
  const missingLines = trace.missing.map((m) => (
    <div key={m} className="trace-missing" data-testid="trace-missing">
      not traced: {m}
    </div>
  ));
  return (
    <div className="trace" data-testid="path-trace" data-partial={trace.partial ? 'true' : undefined}>
      {trace.partial && missingLines}
      {path.why && (
        <div className={`trace-why ${ok ? '' : trace.partial ? 'trace-why-partial' : 'trace-why-bad'}`} data-testid="trace-why">
          {path.why}
        </div>
      )}
      <div className="trace-flow mono">
        traced flow: source port {trace.flow.sport} → {trace.flow.dst.includes(':') ? `[${trace.flow.dst}]` : trace.flow.dst}:
        {trace.flow.dport}
      </div>
      <ol className="trace-steps">
        {trace.steps.map((s, i) => (
          <li
            key={i}
            className={`trace-step ${s.decisive ? 'trace-step-decisive' : ''} ${ok ? 'trace-step-ok' : ''}`}
            data-kind={s.kind}
            data-decisive={s.decisive ? 'true' : undefined}
          >
            <span className="trace-kind">{s.kind}</span>
            <span className="trace-netns">
              {s.reply && (
                <span className="trace-reply" title="on the way back">
                  ←{' '}
                </span>
              )}
              {netnsLabel(s.netns, sandboxId, nameOf, s.node)}
              {s.interface ? <span className="muted"> · {s.interface}</span> : null}
            </span>
            <span>
              <span className="mono small">{s.kind === 'netfilter' ? stepTitle(s) : null}</span>{' '}
              <span className="small">{s.kind === 'netfilter' ? s.detail.replace(/^[^ ]+ /, '') : s.detail}</span>
              {s.owner !== undefined &&
                (s.owner === null ? (
                  <span
                    className="trace-owner trace-owner-none"
                    data-testid="trace-owner"
                    title="no CNI plugin of this engine installed this rule"
                  >
                    no plugin here
                  </span>
                ) : (
                  <>
                    <span className="trace-owner" data-testid="trace-owner">
                      {ownerLabel(s.owner, nameOf)}
                    </span>
                    {s.owner.sandboxId && ownerTraces && (
                      <button
                        type="button"
                        className="btn btn-small"
                        data-testid="trace-owner-cni"
                        title="Open this pod's CNI trace: the plugin calls that installed the rule"
                        onClick={() => openPod(s.owner!.sandboxId!, 'trace')}
                      >
                        CNI trace
                      </button>
                    )}
                  </>
                ))}
              {s.rule && s.kind !== 'route' && (
                <span className="trace-rule">
                  <code>{s.rule}</code>
                  <button type="button" className="btn btn-small" onClick={() => copy(s.rule!)} title="Copy the rule">
                    Copy
                  </button>
                </span>
              )}
            </span>
          </li>
        ))}
      </ol>
      {capture && capture.packets > 0 && capture.pcapngBase64 && (
        <div className="trace-flow small">
          <button
            type="button"
            className="btn btn-small"
            data-testid="trace-pcap"
            onClick={() => downloadPcapng(capture, sandboxId, trace.flow.sport)}
          >
            Download pcapng
          </button>{' '}
          <span className="muted">
            {capture.packets} packets of this flow captured on {capture.interfaces.length} hops ({capture.interfaces.join(', ')}), for
            Wireshark
          </span>
        </div>
      )}
      {!trace.partial && missingLines}
    </div>
  );
}
