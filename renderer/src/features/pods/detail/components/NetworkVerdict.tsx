/**
 * What the Overview leads with: the pod's network at a glance. Each line says where it comes from — the CNI result
 * (recorded, not measured), the last probe, the last throughput measurement, the last CHECK — with its time, and has
 * its own "measure now". Green only for something measured while the pod is ready; a stopped pod gets no verdict.
 */
import { useEffect, useRef } from 'react';
import type { SandboxStatus, TraceEntry } from '../../../../../../shared/domain/sandbox';
import type { CniCheckReport, ThroughputReport } from '../../../../../../shared/domain/measure';
import { bitRate } from '../../../../lib/format';
import { Pill, type Tone } from '../../../../lib/ui/StatusPill';
import { useEndpointCapabilities } from '../../../../lib/endpoint';
import { useNavigation } from '../../../../lib/navigation';
import { useReachability } from '../api/use-reachability';
import { useCniCheck, useThroughput } from '../api/use-measurements';
import { hhmmss, KIND_LABEL, VERDICT_LABEL } from '../model/reachability';
import { networkVerdict } from '../model/verdict';

/** One line's "measure now" action: its label while idle and while the measurement runs. */
function MeasureNow(p: { testId: string; disabled: boolean; busy: boolean; label: [idle: string, busy: string]; onClick: () => void }) {
  return (
    <button type="button" className="btn btn-small" data-testid={p.testId} disabled={p.disabled} onClick={p.onClick}>
      {p.busy ? p.label[1] : p.label[0]}
    </button>
  );
}

function When({ iso, testId }: { iso?: string; testId?: string }) {
  if (!iso) return null;
  return (
    <span className="small muted" title={iso} data-testid={testId}>
      measured at <b className="mono">{hhmmss(iso)}</b>
    </span>
  );
}

/** CHECK per network: this window's last report, otherwise the last CHECK the pod's trace records for each network */
export function lastCheck(
  report: CniCheckReport | undefined,
  trace: TraceEntry[],
): { at: string; tone: Tone; label: string; source: 'report' | 'trace' } | undefined {
  if (report) {
    const failed = report.networks.filter((n) => n.outcome === 'failed' && !n.knownDefect).length;
    const defects = report.networks.filter((n) => n.knownDefect).length;
    const passed = report.networks.filter((n) => n.outcome === 'passed').length;
    if (failed) return { at: report.measuredAt, tone: 'bad', label: `failed on ${failed} of ${report.networks.length}`, source: 'report' };
    if (defects) return { at: report.measuredAt, tone: 'warn', label: 'ok, with a known plugin defect', source: 'report' };
    if (passed) return { at: report.measuredAt, tone: 'ok', label: 'passed', source: 'report' };
    return { at: report.measuredAt, tone: 'muted', label: report.networks[0]?.message ?? 'not run', source: 'report' };
  }
  const last = new Map<string, TraceEntry>();
  for (const t of trace)
    if (t.step === 'cni.network' && t.detail?.verb === 'CHECK') last.set(`${String(t.detail.network)}/${String(t.detail.ifName)}`, t);
  if (last.size === 0) return undefined;
  const entries = [...last.values()];
  const at = entries.map((e) => e.startedAt).sort()[entries.length - 1]!;
  const failed = entries.filter((e) => !e.ok).length;
  return failed
    ? { at, tone: 'bad', label: `failed on ${failed} of ${entries.length} (from the trace)`, source: 'trace' }
    : { at, tone: 'ok', label: 'passed (from the trace)', source: 'trace' };
}

function rateLine(t: ThroughputReport | undefined, dir: 'ingress' | 'egress', requested: string | undefined) {
  const d = t?.[dir];
  return (
    <span data-testid={`verdict-bw-${dir}`}>
      <span className="muted">{dir}</span> requested <b className="mono">{requested ?? 'unlimited'}</b>
      {' → '}
      {d ? (
        <>
          measured <b className="mono">{bitRate(d.measuredBps) ?? '—'}</b>
        </>
      ) : (
        <span className="muted">not measured</span>
      )}
    </span>
  );
}

export function NetworkVerdict({ s }: { s: SandboxStatus }) {
  const caps = useEndpointCapabilities();
  const reach = useReachability(s.id);
  const tp = useThroughput(s.id);
  const check = useCniCheck(s.id);
  const openPod = useNavigation((n) => n.openPod);
  const v = networkVerdict(s, reach.report);
  const ready = s.state === 'SANDBOX_READY' && !s.hostNetwork && !s.netnsClosed;
  const chk = lastCheck(check.report, s.trace);
  const bw = s.bandwidthAnalysis;
  const hasLimit = !!(bw.ingress || bw.egress);
  const tpReport = tp.report?.id === s.id ? tp.report : undefined;
  const shaped = tpReport && [tpReport.ingress, tpReport.egress].every((d) => d.verdict === 'shaped' || d.verdict === 'noLimit');

  // after "Probe now", the new result takes the focus (a screen reader hears it; Tab goes on from there)
  const resultRef = useRef<HTMLDivElement>(null);
  const asked = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (asked.current !== undefined && reach.report && reach.report.measuredAt !== asked.current) {
      asked.current = undefined;
      resultRef.current?.focus();
    }
  }, [reach.report]);

  return (
    <section className="verdict-card" data-testid="network-verdict" data-verdict={v.kind} aria-label="Network at a glance">
      <header className="section-head">
        <h3>Network at a glance</h3>
      </header>
      <dl className="kv verdict-kv">
        <div className="kv-row">
          <dt>IPs</dt>
          <dd>
            {s.hostNetwork ? (
              <span className="muted">host network</span>
            ) : (
              <>
                <b className="mono" data-testid="verdict-ip">
                  {s.ip || '—'}
                </b>
                {s.additionalIps.length > 0 && <span className="mono"> · {s.additionalIps.join(' · ')}</span>}{' '}
                <span className="small muted">from the CNI result (recorded, not measured)</span>
              </>
            )}
          </dd>
        </div>
        <div className="kv-row">
          <dt>Reachability</dt>
          <dd>
            <div className="verdict-line" ref={resultRef} tabIndex={-1} data-testid="verdict-reach">
              <Pill tone={v.tone} title={v.detail}>
                {v.label}
              </Pill>{' '}
              <When iso={v.measuredAt} testId="verdict-reach-at" />
              {reach.report?.trigger === 'onReady' && <span className="small muted"> · on ready</span>}
              {!v.measuredAt && <span className="small muted">{v.detail}</span>}
            </div>
            {v.failing.length > 0 && (
              <ul className="verdict-failing mono small" data-testid="verdict-failing">
                {v.failing.slice(0, 6).map(({ path, index }) => (
                  <li key={index}>
                    <span className="text-bad">{VERDICT_LABEL[path.verdict]}</span> {KIND_LABEL[path.kind]} {path.from} → {path.to}/
                    {path.proto}
                    {path.interface ? ` (${path.interface})` : ''}
                  </li>
                ))}
                {v.failing.length > 6 && <li className="muted">and {v.failing.length - 6} more</li>}
              </ul>
            )}
            {reach.known && reach.available && (
              <div className="verdict-actions">
                <MeasureNow
                  testId="verdict-probe"
                  disabled={!ready || reach.busy}
                  busy={reach.probing}
                  label={['Probe now', 'Probing…']}
                  onClick={() => {
                    asked.current = reach.report?.measuredAt ?? '';
                    reach.runProbe();
                  }}
                />
                <button type="button" className="btn btn-small btn-ghost" onClick={() => openPod(s.id, 'reachability')}>
                  Every path →
                </button>
              </div>
            )}
          </dd>
        </div>
        <div className="kv-row">
          <dt>Bandwidth</dt>
          <dd data-testid="verdict-bw">
            {!hasLimit ? (
              <span className="muted">no bandwidth annotation: unlimited (from configuration)</span>
            ) : (
              <>
                <div className="verdict-line">
                  {tpReport && ready ? (
                    <Pill tone={shaped ? 'ok' : 'bad'}>{shaped ? 'shaped (measured)' : 'not shaped as requested'}</Pill>
                  ) : (
                    <Pill tone="muted">requested only, not measured</Pill>
                  )}{' '}
                  {tpReport && <When iso={tpReport.measuredAt} testId="verdict-bw-at" />}
                </div>
                <div className="small">
                  {rateLine(tpReport, 'ingress', bw.ingress?.human)} · {rateLine(tpReport, 'egress', bw.egress?.human)}
                </div>
                {caps.measurements && (
                  <div className="verdict-actions">
                    <MeasureNow
                      testId="verdict-measure-bw"
                      disabled={!ready || tp.pending}
                      busy={tp.pending}
                      label={['Measure now', 'Measuring…']}
                      onClick={tp.run}
                    />
                  </div>
                )}
              </>
            )}
          </dd>
        </div>
        <div className="kv-row">
          <dt>CNI CHECK</dt>
          <dd data-testid="verdict-check" data-state={chk?.tone ?? 'none'}>
            <div className="verdict-line">
              {chk ? (
                <>
                  <Pill tone={ready ? chk.tone : 'muted'}>{chk.label}</Pill> <When iso={chk.at} />
                </>
              ) : (
                <Pill tone="muted">not run</Pill>
              )}
            </div>
            {caps.measurements && (
              <div className="verdict-actions">
                <MeasureNow
                  testId="verdict-check-run"
                  disabled={!ready || check.pending}
                  busy={check.pending}
                  label={['Check now', 'Checking…']}
                  onClick={check.run}
                />
              </div>
            )}
          </dd>
        </div>
      </dl>
    </section>
  );
}
