/**
 * Reachability, measured: the engine's probe (TCP connects from the host and from inside the pod's netns, with
 * nonce responders) per path, grouped by the network each path crosses, with when and how it was measured. Green only
 * for a path measured reachable while the pod is ready; isolated paths (forbidden by the plugin's design) have their
 * own colour; a report from before the pod stopped is shown greyed, and anything not measured says why. The probe runs
 * once on ready (engine option) and again when the user presses Probe. State: api/use-reachability.ts; rows:
 * ReachabilityPaths.tsx.
 */
import { useEffect, useRef } from 'react';
import { measuredByText, PROBE_PEERS_MAX, type ProbeReport } from '../../../../../../shared/domain/probe';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { useEndpointCapabilities } from '../../../../lib/endpoint';
import { useReachability } from '../api/use-reachability';
import { hhmmss } from '../model/reachability';
import { ReachabilityPaths } from './ReachabilityPaths';

export function ReachabilityPanel({ s }: { s: SandboxStatus }) {
  const m = useReachability(s.id);
  const ownerTraces = useEndpointCapabilities().pluginTrace;
  const { report, known, available } = m;
  const ready = s.state === 'SANDBOX_READY';
  // after Probe the new results take the focus, not <body> (the button itself is disabled while it runs)
  const resultsRef = useRef<HTMLDivElement>(null);
  const asked = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (asked.current === undefined || m.busy) return;
    if ((report && report.measuredAt !== asked.current) || m.error) {
      asked.current = undefined;
      resultsRef.current?.focus();
    }
  }, [report, m.busy, m.error]);
  return (
    <section className="live reach" data-testid="reachability" aria-label="Reachability">
      <header className="live-head">
        <span className="live-badge" aria-hidden>
          packets
        </span>
        <h3>Reachability, measured</h3>
        <span className="toolbar-spacer" />
        {report && <MeasuredAt report={report} />}
        {known && available && (
          <button
            type="button"
            className="btn btn-small"
            data-testid="probe-button"
            onClick={() => {
              asked.current = report?.measuredAt ?? '';
              m.runProbe();
            }}
            disabled={m.busy}
          >
            {m.probing ? 'Probing…' : 'Probe'}
          </button>
        )}
      </header>
      <div className="live-sub small muted">
        On every network the pod is attached to (eth0, eth1, …): TCP connects from the host to each mapped port (127.0.0.1, the gateway of
        each network with portmap, host_ip) and to container-port-only ports on each pod IP; from the pod to each gateway; to and from the
        newest {PROBE_PEERS_MAX} ready peers per network. A port with no listener gets a short-lived responder that answers with a per-probe
        nonce, so a connection that lands in another pod shows as shadowed. A path the network&apos;s plugin forbids by design (a macvlan
        child and its parent&apos;s addresses, the host and a network it has no leg on) is still sent, and shows as isolated. Each
        nameserver of the pod gets a DNS query from inside the pod, over UDP (TCP when the answer is truncated or UDP refused). Beside each
        path, ICMP echoes with DF set find its MTU.
      </div>
      <div className="reach-results" ref={resultsRef} tabIndex={-1} data-testid="reach-results" aria-label="Probe results">
        {!known ? null : !available ? (
          <div className="live-note" data-testid="reach-unavailable">
            Not available from this runtime: the probe enters the pod&apos;s network namespace, which needs Podscope&apos;s own engine on
            this host.
          </div>
        ) : m.error ? (
          <ErrorView error={m.error.error} title={m.error.title} />
        ) : !report ? (
          <div className="live-note muted" data-testid="reach-none">
            Not measured yet{ready ? ' — press Probe.' : '. The pod is not ready: nothing can be measured.'}
          </div>
        ) : (
          <>
            {!ready && report.paths.some((p) => p.verdict === 'reachable') && (
              <div className="live-note" role="status" data-testid="reach-stale">
                <b>The pod is not ready now.</b> These results were measured before; they say nothing about the pod as it is.
              </div>
            )}
            {m.tracing && (
              <div className="live-note" role="status" data-testid="reach-tracing">
                Tracing: each path is probed again from a source port of its own, with TRACE rules in the raw table of the host and of each
                pod netns it crosses, a kfree_skb tracefs instance and tcpdump on every hop while it runs; all are removed when it ends.
              </div>
            )}
            {report.errors.length > 0 && (
              <div className="callout callout-warn small" data-testid="reach-errors">
                {report.errors.map((e) => (
                  <div key={e} className="mono">
                    {e}
                  </div>
                ))}
              </div>
            )}
            <ReachabilityPaths
              s={s}
              report={report}
              actions={{ canExplain: known && available, open: m.open, tracing: m.tracing, busy: m.busy, explain: m.explain, ownerTraces }}
            />
          </>
        )}
      </div>
    </section>
  );
}

function MeasuredAt({ report }: { report: ProbeReport }) {
  return (
    <span className="small muted" data-testid="reach-measured-at" title={report.measuredAt}>
      measured at <b className="mono">{hhmmss(report.measuredAt)}</b> by {measuredByText(report)} · {Math.round(report.durationMs)} ms
      {report.trigger === 'onReady' ? ' · on ready' : ''}
      {/* a report that names its networks says this per network, in each group's heading */}
      {!report.networks && report.peers && report.peers.measured < report.peers.ready && (
        <span data-testid="reach-peers">
          {' '}
          · peers: newest {report.peers.measured} of {report.peers.ready}
        </span>
      )}
    </span>
  );
}
