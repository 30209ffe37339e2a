/**
 * Forwards a pod port to a port on 127.0.0.1 of this machine (like `kubectl port-forward`): the host listens, each
 * connection is carried into the pod's network namespace. Forwards belong to this window and close with it.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { queryKeys } from '../../../../lib/query-keys';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { ErrorView } from '../../../../lib/ui/ErrorView';

const forwardsKey = queryKeys.portForwards;

export function PortForwardPanel({ podId }: { podId: string }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const qc = useQueryClient();
  const [port, setPort] = useState('80');
  const [hostPort, setHostPort] = useState('');
  // while forwards are open their connection counts are re-read; with none there is nothing to poll
  const forwards = useQuery({
    queryKey: forwardsKey,
    queryFn: () => client.call('portForward.list', {}),
    refetchInterval: (q) => (q.state.data?.length ? 2000 : false),
  });
  const mine = (forwards.data ?? []).filter((f) => f.podSandboxId === podId && f.endpointId === endpointId);
  const portNum = Number(port);
  const hostNum = hostPort.trim() === '' ? 0 : Number(hostPort);
  const invalid =
    !Number.isInteger(portNum) || portNum < 1 || portNum > 65535
      ? 'a pod port is 1-65535'
      : !Number.isInteger(hostNum) || hostNum < 0 || hostNum > 65535
        ? 'a host port is 0-65535 (empty: any free one)'
        : undefined;
  const open = useMutation({
    mutationFn: () => client.call('portForward.open', { endpointId, podSandboxId: podId, port: portNum, hostPort: hostNum }),
    onSettled: () => qc.invalidateQueries({ queryKey: forwardsKey }),
  });
  const close = useMutation({
    mutationFn: (id: string) => client.call('portForward.close', { id }),
    onSettled: () => qc.invalidateQueries({ queryKey: forwardsKey }),
  });
  return (
    <div className="stack port-forward">
      <form
        className="toolbar toolbar-plain"
        aria-label="Forward a port"
        onSubmit={(e) => {
          e.preventDefault();
          if (!invalid) open.mutate();
        }}
      >
        <label className="check">
          Pod port
          <input
            className="input mono input-port"
            inputMode="numeric"
            aria-label="Pod port"
            value={port}
            onChange={(e) => setPort(e.target.value)}
          />
        </label>
        <label className="check">
          Host port
          <input
            className="input mono input-port"
            inputMode="numeric"
            aria-label="Host port"
            placeholder="any"
            value={hostPort}
            onChange={(e) => setHostPort(e.target.value)}
          />
        </label>
        <button type="submit" className="btn btn-primary" disabled={!!invalid || open.isPending}>
          Forward port
        </button>
        {invalid && <span className="text-bad small">{invalid}</span>}
        <span className="muted small">listens on 127.0.0.1 only</span>
      </form>
      {open.isError && <ErrorView error={open.error} title="Could not forward the port" />}
      {mine.length > 0 && (
        <table className="table" aria-label="Forwarded ports">
          <thead>
            <tr>
              <th>Pod port</th>
              <th>On this machine</th>
              <th>Connections</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {mine.map((f) => {
              const address = `${f.hostAddress}:${f.hostPort}`;
              return (
                <tr key={f.id} data-testid="forward-row">
                  <td className="mono">{f.port}</td>
                  <td className="mono">
                    <span data-testid="forward-address">{address}</span> <CopyButton text={address} />
                  </td>
                  <td className="mono">{f.connections}</td>
                  <td>
                    <button type="button" className="btn btn-small" onClick={() => close.mutate(f.id)}>
                      Close
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
