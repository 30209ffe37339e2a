/** CNI CHECK for this pod and STATUS for the networks, on demand; each plugin exec also lands in the trace below. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '../../../../lib/query-keys';
import type { CniCheckReport, CniStatusReport, CniVerbOutcome } from '../../../../../../shared/domain/measure';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { ErrorView } from '../../../../lib/ui/ErrorView';

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
  const qc = useQueryClient();
  const check = useMutation({
    mutationFn: (): Promise<CniCheckReport> => client.call('sandbox.cniCheck', { endpointId, id: s.id }),
    // the CHECK execs are now in the pod's trace: show them without waiting for an event
    onSettled: () => qc.invalidateQueries({ queryKey: queryKeys.pod(endpointId, s.id) }),
  });
  const status = useMutation({ mutationFn: (): Promise<CniStatusReport> => client.call('network.cniStatus', { endpointId }) });
  // CHECK and STATUS run in the engine of this process: a CRI endpoint (even a Podscope daemon) cannot be asked
  if (!caps.measurements) return null;
  const ready = s.state === 'SANDBOX_READY' && !s.hostNetwork && !s.netnsClosed;
  return (
    <section className="live" data-testid="cni-check" aria-label="CNI CHECK and STATUS">
      <header className="live-head">
        <h3>CNI CHECK / STATUS</h3>
        <span className="toolbar-spacer" />
        <button
          type="button"
          className="btn btn-small"
          data-testid="cni-check-run"
          disabled={!ready || check.isPending}
          onClick={() => check.mutate()}
        >
          {check.isPending ? 'Checking…' : 'Run CHECK'}
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
      {check.isError && <ErrorView error={check.error} title="CHECK could not run" />}
      {check.data && (
        <div data-testid="cni-check-result" data-ok={check.data.ok}>
          <div className="small muted">CHECK at {new Date(check.data.measuredAt).toLocaleTimeString(undefined, { hour12: false })}</div>
          <Rows rows={check.data.networks} />
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
