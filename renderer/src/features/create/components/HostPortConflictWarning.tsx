/**
 * Before creating: a host port this form maps is already held by a ready sandbox. portmap appends the new pod's
 * DNAT jump after the holder's, and the first match wins, so connections to that port would never reach the new pod.
 */
import type { PendingHostPortConflict } from '../../../../../shared/domain/probe';

export function HostPortConflictWarning({ conflicts }: { conflicts?: PendingHostPortConflict[] }) {
  if (!conflicts || conflicts.length === 0) return null;
  return (
    <div className="callout callout-warn" data-testid="preview-host-port-conflicts" role="alert">
      <div className="callout-title">Host port already taken</div>
      {conflicts.map((c) => (
        <div key={`${c.hostPort}/${c.protocol}/${c.hostIP}`} className="small">
          <b className="mono">
            {c.hostIP ? `${c.hostIP}:` : ''}
            {c.hostPort}/{c.protocol}
          </b>{' '}
          is mapped by ready sandbox{' '}
          {c.holders.map((h) => (
            <span key={h.id} className="mono">
              {h.name} ({h.id.slice(0, 12)}){' '}
            </span>
          ))}
          — its DNAT rule matches first, so this pod would not be reachable on that port.
        </div>
      ))}
    </div>
  );
}
