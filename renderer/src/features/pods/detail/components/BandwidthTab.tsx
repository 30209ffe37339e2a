/** Annotation text → bit/s → human form → what the bandwidth plugin actually got (from its recorded stdin). */
import type { SandboxStatus, TraceEntry } from '../../../../../../shared/domain/sandbox';
import type { ParsedBandwidthValue } from '../../../../../../shared/domain/bandwidth';
import { EmptyState } from '../../../../lib/ui/EmptyState';
import { JsonView, parseMaybeJson } from '../../../../lib/ui/JsonView';
import { Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';
import { useEndpointCapabilities } from '../../../../lib/endpoint';
import { LiveBandwidth, type ReceivedBandwidth } from './LiveBandwidth';
import { ThroughputPanel } from './ThroughputPanel';

function bandwidthStdin(trace: TraceEntry[]): unknown {
  const call = trace.find((t) => t.plugin?.type === 'bandwidth' && t.plugin.verb === 'ADD');
  if (!call?.plugin) return undefined;
  const stdin = parseMaybeJson(call.plugin.stdin) as { runtimeConfig?: { bandwidth?: unknown } };
  return stdin?.runtimeConfig?.bandwidth ?? null;
}

function Row({ dir, v }: { dir: 'ingress' | 'egress'; v?: ParsedBandwidthValue }) {
  if (!v) {
    return (
      <tr>
        <th>{dir}</th>
        <td colSpan={4} className="muted">
          no annotation: unlimited
        </td>
      </tr>
    );
  }
  return (
    <tr className={v.error ? 'row-error' : undefined} data-testid={`bw-${dir}`}>
      <th>{dir}</th>
      <td className="mono">
        <span className="muted">{v.annotation}: </span>
        {JSON.stringify(v.raw)}
      </td>
      <td className="mono">{v.bitsPerSecond ?? '—'}</td>
      <td className="mono">{v.human ?? '—'}</td>
      <td>{v.error ? <span className="text-bad">{v.error}</span> : <Pill tone="ok">valid</Pill>}</td>
    </tr>
  );
}

function receivedRates(received: unknown, traced: boolean): ReceivedBandwidth | undefined {
  if (!traced || received === undefined) return undefined;
  if (received === null || typeof received !== 'object') return {};
  const r = received as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === 'number' ? x : undefined);
  return { ingressRate: num(r.ingressRate), egressRate: num(r.egressRate) };
}

export function BandwidthTab({ s, traced = true, runtime }: { s: SandboxStatus; traced?: boolean; runtime?: string }) {
  const a = s.bandwidthAnalysis;
  const received = bandwidthStdin(s.trace);
  const ready = s.state === 'SANDBOX_READY' && !s.netnsClosed;
  // measured by this process, so a CRI runtime's pod has it too, though its runtime records no plugin trace
  const measures = useEndpointCapabilities().measurements;
  const live = (
    <>
      <LiveBandwidth id={s.id} analysis={a} received={receivedRates(received, traced)} ready={ready} />
      {measures && <ThroughputPanel s={s} />}
    </>
  );
  if (!a.ingress && !a.egress) {
    return (
      <div className="stack">
        <EmptyState title="No bandwidth annotations">
          Set <span className="mono">kubernetes.io/ingress-bandwidth</span> or <span className="mono">kubernetes.io/egress-bandwidth</span>{' '}
          to have the bandwidth plugin shape traffic with tc.
        </EmptyState>
        {live}
      </div>
    );
  }
  return (
    <div className="stack">
      {live}
      <table className="table">
        <thead>
          <tr>
            <th>direction</th>
            <th>annotation value</th>
            <th>bit/s (rounded up)</th>
            <th>human</th>
            <th>validation</th>
          </tr>
        </thead>
        <tbody>
          <Row dir="ingress" v={a.ingress} />
          <Row dir="egress" v={a.egress} />
        </tbody>
      </table>
      {a.error && <div className="callout callout-bad">{a.error}</div>}
      <div className="cols">
        <div className="col">
          <Section title="Capability computed from the annotations">
            {a.capability ? <JsonView value={a.capability} /> : <div className="muted">none (no valid annotation)</div>}
            <p className="small muted">
              An unset direction is 0; each set direction gets the largest uint32 as burst, as containerd sends it.
            </p>
          </Section>
        </div>
        <div className="col">
          <Section title="runtimeConfig.bandwidth the plugin received">
            {!traced ? (
              <div className="muted" data-testid="bw-received-unavailable">
                Not available from this runtime{runtime ? ` (${runtime})` : ''}: CRI does not carry the plugin's stdin. The capability on
                the left is what containerd's rules compute from these annotations.
              </div>
            ) : received === undefined ? (
              <div className="muted">No bandwidth plugin ADD in the trace (not in the conflist, or CNI did not run).</div>
            ) : received === null ? (
              <div className="muted">The bandwidth plugin ran without runtimeConfig.bandwidth (it does not declare the capability?).</div>
            ) : (
              <JsonView value={received} />
            )}
          </Section>
        </div>
      </div>
    </div>
  );
}
