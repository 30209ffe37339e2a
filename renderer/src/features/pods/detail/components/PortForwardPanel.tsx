/**
 * Forwards a pod port to a port on 127.0.0.1 of this machine (like `kubectl port-forward`): the host listens, each
 * connection is carried into the pod's network namespace. Forwards belong to this window and close with it, and end
 * with their pod (stopped or removed): the engine says why, and the panel keeps saying it where the row was.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
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
  const ended = useEndedForwards(mine, () => void qc.invalidateQueries({ queryKey: forwardsKey }));
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
      {ended.map((e) => (
        <p key={e.id} className="small text-bad" role="status" data-testid="forward-ended">
          The forward of pod port {e.port} ({e.address}) ended: {e.reason}
        </p>
      ))}
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

interface EndedForward {
  id: string;
  port: number;
  address: string;
  reason: string;
}

/** forwards of this panel that the engine closed by itself (their pod stopped or went), with the reason it gave */
function useEndedForwards(mine: Array<{ id: string; port: number; hostAddress: string; hostPort: number }>, onEnded: () => void) {
  const client = useClient();
  const [ended, setEnded] = useState<EndedForward[]>([]);
  // the rows shown last, and the callback, as the event handler (subscribed once) needs them
  const shown = useRef(mine);
  const ended$ = useRef(onEnded);
  useEffect(() => {
    shown.current = mine;
    ended$.current = onEnded;
  });
  useEffect(
    () =>
      client.onEvent((e) => {
        if (e.kind !== 'portForward.closed' || !e.reason) return;
        const f = shown.current.find((x) => x.id === e.id);
        if (!f) return;
        setEnded((old) => [
          ...old.filter((x) => x.id !== f.id),
          { id: f.id, port: f.port, address: `${f.hostAddress}:${f.hostPort}`, reason: e.reason! },
        ]);
        ended$.current();
      }),
    [client],
  );
  return ended;
}
