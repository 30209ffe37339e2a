/**
 * "Does the limit really shape traffic?" measured, not read: bulk TCP each way through the pod's veth, the rate
 * past the tbf burst against the requested one, the burst in bytes and, prominently, the flow size below which
 * the limit never engages. Only a ready pod is measured; the result always shows when it was taken.
 */
import { useEffect, useState } from 'react';
import { type ThroughputDirectionReport, type ThroughputProgress } from '../../../../../../shared/domain/measure';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { bitRate, byteSize } from '../../../../lib/format';
import { useThroughput } from '../api/use-measurements';

const VERDICT: Record<ThroughputDirectionReport['verdict'], { label: string; tone: 'ok' | 'bad' | 'warn' | 'muted' }> = {
  shaped: { label: 'shaped (measured)', tone: 'ok' },
  notShaped: { label: 'NOT shaped (measured)', tone: 'bad' },
  burstNotPassed: { label: 'burst not used up', tone: 'warn' },
  noLimit: { label: 'no limit', tone: 'muted' },
  failed: { label: 'could not measure', tone: 'bad' },
};

function time(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString(undefined, { hour12: false });
}

function Direction({ d }: { d: ThroughputDirectionReport }) {
  const v = VERDICT[d.verdict];
  return (
    <div className={`tp-dir bwf-${v.tone}`} data-testid={`tp-${d.direction}`} data-verdict={d.verdict}>
      <div className="bwf-dir">{d.direction}</div>
      <div className="tp-figures">
        <div>
          <span className="muted small">requested (annotation)</span>{' '}
          <b className="mono" data-testid={`tp-requested-${d.direction}`}>
            {bitRate(d.requestedBps) ?? 'none'}
          </b>
        </div>
        <div>
          <span className="muted small">measured past the burst</span>{' '}
          <b className="mono" data-testid={`tp-measured-${d.direction}`}>
            {bitRate(d.measuredBps) ?? '—'}
          </b>
        </div>
        <div>
          <span className="muted small">whole transfer</span>{' '}
          <span className="mono">
            {bitRate(d.overallBps) ?? '—'} · {byteSize(d.totalBytes)} of payload
          </span>
        </div>
        <div>
          <span className="muted small">tbf burst (kernel)</span>{' '}
          <span className="mono" data-testid={`tp-burst-${d.direction}`}>
            {d.burstBytes !== undefined ? `${d.burstBytes.toLocaleString('en-US')} B` : '—'}
          </span>
          {d.burstBytes !== undefined && <span className="muted small"> ({byteSize(d.burstBytes)}, counted on the wire)</span>}
          {d.device && <span className="muted small"> on {d.device}</span>}
        </div>
      </div>
      <div className="bwf-verdict">
        <span className={`verdict verdict-${v.tone}`} data-testid={`tp-verdict-${d.direction}`}>
          {v.label}
        </span>
        <div className="bwf-note small">{d.note}</div>
      </div>
    </div>
  );
}

export function ThroughputPanel({ s }: { s: SandboxStatus }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const [progress, setProgress] = useState<ThroughputProgress | undefined>();
  const m = useThroughput(s.id);
  useEffect(
    () =>
      client.onEvent((e) => {
        if (e.kind === 'sandbox' && e.endpointId === endpointId && e.event.type === 'sandbox.measureProgress' && e.event.id === s.id)
          setProgress(e.event.progress);
      }),
    [client, endpointId, s.id],
  );
  const ready = s.state === 'SANDBOX_READY' && !s.hostNetwork && !s.netnsClosed;
  const report = m.report?.id === s.id ? m.report : undefined;
  const warnings = report ? [report.ingress, report.egress].filter((d) => d.unshapedBelowBytes !== undefined) : [];
  return (
    <section className="live live-emphasis" data-testid="throughput" aria-label="Measured throughput">
      <header className="live-head">
        <span className="live-badge" aria-hidden>
          measured
        </span>
        <h3>Does it really shape? Bulk TCP through the veth</h3>
        <span className="toolbar-spacer" />
        {report && (
          <span className="live-when small muted" data-testid="tp-measured-at" title={report.measuredAt}>
            measured at <b className="mono">{time(report.measuredAt)}</b>
          </span>
        )}
        <button
          type="button"
          className="btn btn-small"
          data-testid="tp-run"
          disabled={!ready || m.pending}
          onClick={() => {
            setProgress(undefined);
            m.run();
          }}
        >
          {m.pending ? 'Measuring…' : report ? 'Measure again' : 'Measure throughput'}
        </button>
      </header>
      <div className="live-sub small muted">
        Host → pod IP (ingress), then pod → its gateway on the host (egress), each until its rate past the tbf burst is known (up to 15 s).
        The rate is taken after the burst is used up.{' '}
        <span data-testid="tp-units">
          Units: rates in bit/s, sizes in bytes, both with SI prefixes (1 MB = 1,000,000 B; 1 Mbit/s = 1,000,000 bit/s), as tc and the
          bandwidth annotations mean them.
        </span>
      </div>
      {!ready && (
        <div className="live-note" data-testid="tp-not-ready">
          The pod is not ready{s.netnsClosed ? ' (its network namespace is gone)' : ''}: there is nothing to measure, and no verdict is
          shown.
        </div>
      )}
      {m.pending && (
        <div className="tp-progress" data-testid="tp-progress" role="status">
          {progress
            ? `${progress.direction}: ${(progress.elapsedMs / 1000).toFixed(1)} of ${progress.durationMs / 1000} s, ${byteSize(progress.bytes)} received`
            : 'starting…'}
          <progress max={progress?.durationMs ?? 1} value={progress?.elapsedMs ?? 0} />
        </div>
      )}
      {m.error && <ErrorView error={m.error} title="The measurement failed" />}
      {report && ready && (
        <div className="stack-s">
          {warnings.map((d) => (
            <div key={d.direction} className="callout callout-warn tp-warning" data-testid={`tp-unshaped-${d.direction}`} role="alert">
              <b>
                {d.direction}: transfers smaller than {byteSize(d.unshapedBelowBytes!)} are not shaped (counted on the wire, headers
                included).
              </b>{' '}
              The tbf bucket holds {d.burstBytes!.toLocaleString('en-US')} bytes and starts full, so a shorter flow never meets the{' '}
              {bitRate(d.appliedBps ?? d.requestedBps)} limit.
            </div>
          ))}
          <div className="bwf">
            <Direction d={report.ingress} />
            <Direction d={report.egress} />
          </div>
        </div>
      )}
    </section>
  );
}
