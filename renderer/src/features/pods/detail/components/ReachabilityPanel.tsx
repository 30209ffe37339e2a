/**
 * Reachability, measured: the engine's probe (TCP connects from the host and from inside the pod's netns, with
 * nonce responders) per path, with when and how it was measured. Green only for a path measured reachable while the
 * pod is ready; a report from before the pod stopped is shown greyed, and anything not measured says "derived from
 * configuration". The probe runs once on ready (engine option) and again when the user presses Probe.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { PROBE_PEERS_MAX, type ProbePath, type ProbeReport, type ProbeVerdict } from '../../../../../../shared/domain/probe';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import type { PodscopeClient } from '../../../../../../shared/ipc/client';
import { useClient } from '../../../../lib/connection-context';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { queryKeys } from '../../../../lib/query-keys';
import { Pill, type Tone } from '../../../../lib/ui/StatusPill';
import { PathTrace } from './PathTrace';

const lastProbeQuery = (client: PodscopeClient, endpointId: string, id: string) =>
  queryOptions({
    queryKey: queryKeys.podProbe(endpointId, id),
    queryFn: () => client.call('sandbox.lastProbe', { endpointId, id }),
    // the probe-on-ready may still be running when the detail opens: look again until a report exists
    refetchInterval: (q) => (q.state.data === null ? 2000 : false),
  });

export function hhmmss(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString(undefined, { hour12: false });
}

const LABEL: Record<ProbeVerdict, string> = {
  reachable: 'reachable',
  refused: 'refused',
  timeout: 'timed out',
  unreachable: 'unreachable',
  shadowed: 'shadowed',
  notApplicable: 'not applicable',
};

export function verdictTone(p: ProbePath, podReady: boolean): Tone {
  if (!p.measured || !podReady) return 'muted';
  if (p.verdict === 'reachable') return 'ok';
  if (p.verdict === 'shadowed') return 'warn';
  if (p.verdict === 'notApplicable') return 'muted';
  return 'bad';
}

/** not measured: either nothing applies (derived from the pod's state and configuration) or the measurement could not be made */
const unmeasuredLabel = (p: ProbePath) => (p.verdict === 'notApplicable' ? 'derived from configuration' : 'not measured');

const KIND: Record<ProbePath['kind'], string> = { hostPort: 'host port', podPort: 'pod port', gateway: 'gateway', peer: 'peer' };

export function ReachabilityPanel({ s }: { s: SandboxStatus }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const known = useCurrentEndpoint() !== undefined;
  const available = useEndpointCapabilities().liveNetwork;
  const qc = useQueryClient();
  const last = useQuery({ ...lastProbeQuery(client, endpointId, s.id), enabled: known && available });
  const probe = useMutation({
    mutationFn: () => client.call('sandbox.probe', { endpointId, id: s.id }),
    onSuccess: (report) => qc.setQueryData(queryKeys.podProbe(endpointId, s.id), report),
  });
  const report: ProbeReport | null | undefined = last.data;
  // Why?/Trace: one traced probe explains every path; the row asked about opens
  const [open, setOpen] = useState<number | null>(null);
  const trace = useMutation({
    mutationFn: () => client.call('sandbox.probe', { endpointId, id: s.id, trace: true }),
    onSuccess: (report) => qc.setQueryData(queryKeys.podProbe(endpointId, s.id), report),
  });
  const explain = (i: number) => {
    if (open === i) return setOpen(null);
    setOpen(i);
    if (!report?.paths[i]?.trace) trace.mutate();
  };
  const busy = probe.isPending || trace.isPending;
  const ready = s.state === 'SANDBOX_READY';
  return (
    <section className="live reach" data-testid="reachability" aria-label="Reachability">
      <header className="live-head">
        <span className="live-badge" aria-hidden>
          packets
        </span>
        <h3>Reachability, measured</h3>
        <span className="toolbar-spacer" />
        {report && (
          <span className="small muted" data-testid="reach-measured-at" title={report.measuredAt}>
            measured at <b className="mono">{hhmmss(report.measuredAt)}</b> by {report.measuredBy} · {Math.round(report.durationMs)} ms
            {report.trigger === 'onReady' ? ' · on ready' : ''}
            {report.peers && report.peers.measured < report.peers.ready && (
              <span data-testid="reach-peers">
                {' '}
                · peers: newest {report.peers.measured} of {report.peers.ready}
              </span>
            )}
          </span>
        )}
        {known && available && (
          <button
            type="button"
            className="btn btn-small"
            data-testid="probe-button"
            onClick={() => {
              setOpen(null);
              probe.mutate();
            }}
            disabled={busy}
          >
            {probe.isPending ? 'Probing…' : 'Probe'}
          </button>
        )}
      </header>
      <div className="live-sub small muted">
        TCP connects from the host to each mapped port (127.0.0.1, the bridge gateway, host_ip) and to container-port-only ports on the pod
        IP; from the pod to its gateway; to and from the newest {PROBE_PEERS_MAX} ready peers on the same network. A port with no listener
        gets a short-lived responder that answers with a per-probe nonce, so a connection that lands in another pod shows as shadowed.
      </div>
      {!known ? null : !available ? (
        <div className="live-note" data-testid="reach-unavailable">
          Not available from this runtime: the probe enters the pod's network namespace, which needs Podscope's own engine on this host.
        </div>
      ) : probe.isError ? (
        <ErrorView error={probe.error} title="Probe failed" />
      ) : trace.isError ? (
        <ErrorView error={trace.error} title="Trace failed" />
      ) : last.isError ? (
        <ErrorView error={last.error} title="Could not read the last probe" />
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
          {trace.isPending && (
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
          <table className="table" data-testid="reach-paths">
            <thead>
              <tr>
                <th>path</th>
                <th>from</th>
                <th>to</th>
                <th>verdict</th>
                <th>RTT</th>
                <th>answered by / note</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {report.paths.map((p, i) => (
                <Fragment key={i}>
                  <tr data-kind={p.kind} data-verdict={p.verdict} data-measured={p.measured}>
                    <td className="nowrap">
                      {KIND[p.kind]}
                      {p.family ? <span className="muted small"> IPv{p.family}</span> : null}
                    </td>
                    <td className="mono nowrap">{p.from}</td>
                    <td className="mono nowrap">
                      {p.to}/{p.proto}
                    </td>
                    <td className="nowrap">
                      <Pill
                        tone={verdictTone(p, ready)}
                        title={p.measured ? `measured at ${hhmmss(report.measuredAt)} by ${report.measuredBy}` : unmeasuredLabel(p)}
                      >
                        {LABEL[p.verdict]}
                      </Pill>
                      {!p.measured && (
                        <div className="small muted" data-testid="reach-derived">
                          {unmeasuredLabel(p)}
                        </div>
                      )}
                    </td>
                    <td className="mono nowrap">{p.rttMs !== undefined ? `${p.rttMs.toFixed(2)} ms` : '—'}</td>
                    <td className="small">
                      {p.answeredBy && p.answeredBy !== s.id && (
                        <div className="mono" data-testid="reach-answered-by">
                          answered by {p.answeredBy.slice(0, 12)}
                        </div>
                      )}
                      {p.listener && (
                        <span className="muted">{p.listener === 'existing' ? 'existing listener · ' : "probe's responder · "}</span>
                      )}
                      <span className="muted">{p.note}</span>
                    </td>
                    <td className="nowrap">
                      {p.measured && known && available && (
                        <button
                          type="button"
                          className="btn btn-small"
                          data-testid="reach-why"
                          aria-expanded={open === i}
                          onClick={() => explain(i)}
                          disabled={busy && open !== i}
                          title={
                            p.verdict === 'reachable'
                              ? 'Trace this path through the kernel'
                              : 'Which rule or route stopped it, and who installed it'
                          }
                        >
                          {trace.isPending && open === i ? 'Tracing…' : p.verdict === 'reachable' ? 'Trace' : 'Why?'}
                        </button>
                      )}
                    </td>
                  </tr>
                  {open === i && !trace.isPending && (
                    <tr data-testid="reach-trace-row">
                      <td colSpan={7}>
                        <PathTrace
                          capture={report.capture}
                          path={p}
                          sandboxId={s.id}
                          nameOf={(id) => (id === s.id ? `${s.metadata.namespace}/${s.metadata.name}` : undefined)}
                        />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** Which pod's DNAT rule wins each contested host port (from the real CNI-HOSTPORT-DNAT order when the engine could read it). */
export function HostPortConflicts({ s, nameOf }: { s: SandboxStatus; nameOf?: (id: string) => string | undefined }) {
  const conflicts = s.hostPortConflicts ?? [];
  if (conflicts.length === 0) return null;
  return (
    <div className="callout callout-warn" data-testid="host-port-conflicts">
      <div className="callout-title">Contested host ports</div>
      {conflicts.map((c) => {
        const mine = c.winner === s.id;
        return (
          <div key={`${c.hostPort}/${c.protocol}/${c.hostIP}`} className="small" data-winner={c.winner}>
            <b className="mono">
              {c.hostIP ? `${c.hostIP}:` : ''}
              {c.hostPort}/{c.protocol}
            </b>
            :{' '}
            {mine ? (
              'this pod wins'
            ) : (
              <>
                sandbox <span className="mono">{c.winnerName ?? nameOf?.(c.winner) ?? c.winner.slice(0, 12)}</span> ({c.winner.slice(0, 12)}
                ) wins
              </>
            )}
            ; shadowed: {c.shadowed.map((id) => (id === s.id ? 'this pod' : id.slice(0, 12))).join(', ')}{' '}
            <span className="muted">
              (
              {c.winnerFrom === 'dnat-chain'
                ? 'first matching jump in iptables -t nat -S CNI-HOSTPORT-DNAT'
                : 'derived from creation order: portmap appends each jump'}
              )
            </span>
          </div>
        );
      })}
    </div>
  );
}
