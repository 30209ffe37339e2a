/** CNI CHECK for this pod and STATUS for the networks, on demand; each plugin exec also lands in the trace below. */
import { useMutation } from '@tanstack/react-query';
import type { CniStatusReport, CniVerbOutcome } from '../../../../../../shared/domain/measure';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { useCniCheck } from '../api/use-measurements';

const TONE: Record<CniVerbOutcome, string> = { passed: 'ok', failed: 'bad', notSupported: 'muted', disabled: 'muted' };
const LABEL: Record<CniVerbOutcome, string> = { passed: 'passed', failed: 'failed', notSupported: 'not supported', disabled: 'disabled' };

function Rows({
  rows,
}: {
  rows: Array<{ network: string; ifName?: string; cniVersion: string; outcome: CniVerbOutcome; message: string; knownDefect?: object }>;
}) {
  return (
    <table className="table small">
      <tbody>
        {rows.map((n) => (
          <tr key={`${n.network}-${n.ifName ?? ''}`} data-outcome={n.outcome}>
            <td>
              {/* a plugin's known defect is a warning: amber, never the network's failure */}
              <span className={`pill pill-${n.knownDefect ? 'warn' : TONE[n.outcome]}`}>
                {LABEL[n.outcome]}
                {n.knownDefect ? ', with a known plugin defect' : ''}
              </span>
            </td>
            <td className="mono">
              {n.network}
              {n.ifName ? `/${n.ifName}` : ''} v{n.cniVersion}
            </td>
            <td>{n.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CniCheckPanel({ s }: { s: SandboxStatus }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const check = useCniCheck(s.id);
  const status = useMutation({ mutationFn: (): Promise<CniStatusReport> => client.call('network.cniStatus', { endpointId }) });
  // CHECK and STATUS run in this process: its engine's pods, or a CRI runtime's on this machine (not a Podscope
  // daemon's, whose engine is the one to ask)
  if (!caps.measurements) return null;
  const ready = s.state === 'SANDBOX_READY' && !s.hostNetwork && !s.netnsClosed;
  return (
    <section className="live" data-testid="cni-check" aria-label="CNI CHECK and STATUS">
      <header className="live-head">
        <h3>CNI CHECK / STATUS</h3>
        <span className="toolbar-spacer" />
        <button type="button" className="btn btn-small" data-testid="cni-check-run" disabled={!ready || check.pending} onClick={check.run}>
          {check.pending ? 'Checking…' : 'Run CHECK'}
        </button>
        <button
          type="button"
          className="btn btn-small"
          data-testid="cni-status-run"
          disabled={status.isPending}
          onClick={() => status.mutate()}
        >
          {status.isPending ? 'Asking…' : 'Run STATUS'}
        </button>
      </header>
      <div className="live-sub small muted">
        CHECK runs each plugin with the cached ADD result (lists ≥ 0.4.0); STATUS exists from spec 1.1.0. A verb a version lacks is “not
        supported”, not a failure.
      </div>
      {!ready && <div className="live-note">The pod is not ready: CHECK has nothing to check.</div>}
      {check.error && <ErrorView error={check.error} title="CHECK could not run" />}
      {check.report && (
        <div data-testid="cni-check-result" data-ok={check.report.ok}>
          <div className="small muted">CHECK at {new Date(check.report.measuredAt).toLocaleTimeString(undefined, { hour12: false })}</div>
          <Rows rows={check.report.networks} />
        </div>
      )}
      {status.isError && <ErrorView error={status.error} title="STATUS could not run" />}
      {status.data && (
        <div data-testid="cni-status-result" data-ok={status.data.ok}>
          <div className="small muted">STATUS at {new Date(status.data.measuredAt).toLocaleTimeString(undefined, { hour12: false })}</div>
          <Rows rows={status.data.networks} />
        </div>
      )}
    </section>
  );
}
