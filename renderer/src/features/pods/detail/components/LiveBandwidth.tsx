/**
 * The headline answer to "was my bandwidth annotation really applied?": per direction, the annotation → the rate
 * the plugin received → the tbf rate the kernel has on the device now, and one verdict.
 */
import type { LiveBandwidthCheck, LiveNetworkView } from '../../../../../../shared/domain/live';
import type { BandwidthAnalysis } from '../../../../../../shared/domain/bandwidth';
import { bandwidthVerdict, type BandwidthVerdict } from '../model/live-diff';
import { bitRate, byteSize } from '../../../../lib/format';
import { LivePanel } from './LivePanel';

/** runtimeConfig.bandwidth as recorded from the plugin's stdin: undefined when not traced / no call */
export interface ReceivedBandwidth {
  ingressRate?: number;
  egressRate?: number;
}

const VERDICT: Record<BandwidthVerdict, { icon: string; label: string; tone: 'ok' | 'bad' | 'warn' | 'muted' }> = {
  applied: { icon: '✓', label: 'applied', tone: 'ok' },
  mismatch: { icon: '✗', label: 'mismatch', tone: 'bad' },
  missing: { icon: '✗', label: 'not shaped', tone: 'bad' },
  unexpected: { icon: '!', label: 'shaped without annotation', tone: 'warn' },
  'not-shaped': { icon: '–', label: 'not shaped', tone: 'muted' },
};

const ROLE: Record<string, string> = { 'host-veth': 'host end of the pod veth', ifb: 'ifb (egress redirect)' };

function summary(checks: LiveBandwidthCheck[], ready: boolean): { tone: 'ok' | 'bad' | 'warn' | 'muted'; text: string } {
  // a stopped or NOTREADY pod gets no green network verdict, whatever its qdiscs still say
  if (!ready) return { tone: 'muted', text: 'The pod is not ready: the qdiscs below are leftovers, not a verdict' };
  const verdicts = checks.map(bandwidthVerdict);
  const bad = verdicts.filter((v) => v === 'mismatch' || v === 'missing').length;
  const odd = verdicts.filter((v) => v === 'unexpected').length;
  const applied = verdicts.filter((v) => v === 'applied').length;
  if (bad)
    return { tone: 'bad', text: `No — ${bad} of ${checks.length} direction${checks.length > 1 ? 's are' : ' is'} not shaped as annotated` };
  if (odd) return { tone: 'warn', text: 'Shaped, but without an annotation asking for it' };
  // this is a configuration read (tc's qdisc settings), not a measurement: the tbf burst can let whole flows through
  if (applied)
    return {
      tone: 'ok',
      text: `${applied === 1 ? 'The annotated rate is' : 'Every annotated rate is'} configured in the kernel (tc settings read, not measured — measure below)`,
    };
  return { tone: 'muted', text: 'Nothing to apply: no annotation, and the kernel shapes nothing' };
}

function Step({ label, value, sub, testId }: { label: string; value?: React.ReactNode; sub?: React.ReactNode; testId?: string }) {
  return (
    <div className="bwf-step" data-testid={testId}>
      <div className="bwf-label">{label}</div>
      <div className="bwf-value mono">{value ?? <span className="muted">—</span>}</div>
      {sub && <div className="bwf-sub small muted">{sub}</div>}
    </div>
  );
}

function FlowRow({
  c,
  analysis,
  received,
  qdiscs,
}: {
  c: LiveBandwidthCheck;
  analysis: BandwidthAnalysis;
  received?: ReceivedBandwidth;
  qdiscs: LiveNetworkView['qdiscs'];
}) {
  const verdict = bandwidthVerdict(c);
  const v = VERDICT[verdict];
  const annotation = analysis[c.direction];
  const got = c.direction === 'ingress' ? received?.ingressRate : received?.egressRate;
  const qdisc = c.device ? qdiscs.find((q) => q.dev === c.device) : undefined;
  const role = qdisc ? ROLE[qdisc.role] : c.direction === 'ingress' ? ROLE['host-veth'] : ROLE.ifb;
  return (
    <div className={`bwf-row bwf-${v.tone}`} data-testid={`bw-live-${c.direction}`} data-verdict={verdict}>
      <div className="bwf-dir">{c.direction}</div>
      <Step
        label="requested"
        value={c.requestedBitsPerSecond !== undefined ? bitRate(c.requestedBitsPerSecond) : annotation ? undefined : 'no annotation'}
        sub={annotation ? `${annotation.annotation.replace('kubernetes.io/', '')}: "${annotation.raw}"` : undefined}
      />
      <span className="bwf-arrow" aria-hidden>
        →
      </span>
      <Step
        label="passed to the plugin"
        value={received === undefined ? undefined : got === undefined ? 'none' : got === 0 ? '0 (unset)' : bitRate(got)}
        sub={
          received === undefined ? (
            'not recorded'
          ) : (
            <span className="mono">
              runtimeConfig.
              <wbr />
              bandwidth.
              <wbr />
              {c.direction}Rate
            </span>
          )
        }
      />
      <span className="bwf-arrow" aria-hidden>
        →
      </span>
      <Step
        label="applied in the kernel"
        testId={`bw-applied-${c.direction}`}
        value={c.appliedBitsPerSecond !== undefined ? `tbf ${bitRate(c.appliedBitsPerSecond)}` : 'no tbf'}
        sub={
          c.device ? (
            <>
              on <span className="mono">{c.device}</span> · {role}
              {qdisc?.kind && qdisc.kind !== 'tbf' ? ` · root qdisc ${qdisc.kind}` : ''}
            </>
          ) : (
            role
          )
        }
      />
      <div className="bwf-verdict">
        <span className={`verdict verdict-${v.tone}`} data-testid={`bw-verdict-${c.direction}`}>
          <span aria-hidden>{v.icon}</span> {v.label}
        </span>
        <div className="bwf-note small">{c.note}</div>
      </div>
    </div>
  );
}

export function LiveBandwidth({
  id,
  analysis,
  received,
  ready = true,
}: {
  id: string;
  analysis: BandwidthAnalysis;
  received?: ReceivedBandwidth;
  ready?: boolean;
}) {
  return (
    <LivePanel
      id={id}
      testId="live-bandwidth"
      title="Was it applied? The kernel's tc qdiscs now"
      subtitle="Ingress is shaped by a tbf on the host end of the pod's veth, egress by a tbf on the ifb the bandwidth plugin redirects to."
      emphasis
    >
      {(view) => {
        const s = summary(view.bandwidth, ready);
        return (
          <div className="stack-s">
            <div className={`bwf-answer bwf-answer-${s.tone}`} data-testid="bw-live-answer">
              {s.text}
            </div>
            {view.bandwidth.length === 0 ? (
              <div className="muted">The engine reported no bandwidth check.</div>
            ) : (
              <div className="bwf">
                {view.bandwidth.map((c) => (
                  <FlowRow key={c.direction} c={c} analysis={analysis} received={received} qdiscs={view.qdiscs} />
                ))}
              </div>
            )}
            {view.qdiscs.length > 0 && (
              <details className="small">
                <summary className="muted">root qdiscs read ({view.qdiscs.length})</summary>
                <table className="table" data-testid="live-qdiscs">
                  <thead>
                    <tr>
                      <th>device</th>
                      <th>role</th>
                      <th>kind</th>
                      <th>rate</th>
                      <th>burst</th>
                    </tr>
                  </thead>
                  <tbody>
                    {view.qdiscs.map((q) => (
                      <tr key={`${q.dev}-${q.kind}`}>
                        <td className="mono">{q.dev}</td>
                        <td>{ROLE[q.role] ?? q.role}</td>
                        <td className="mono">{q.kind}</td>
                        <td className="mono">{bitRate(q.rateBitsPerSecond) ?? '—'}</td>
                        <td className="mono">{q.burstBytes !== undefined ? byteSize(q.burstBytes) : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </details>
            )}
          </div>
        );
      }}
    </LivePanel>
  );
}
