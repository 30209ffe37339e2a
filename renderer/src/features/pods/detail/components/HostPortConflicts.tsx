import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';

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
