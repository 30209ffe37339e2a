/** The two tables of the live netns view: interfaces with their addresses marked, routes listed or missing. */
import { Pill } from '../../../../lib/ui/StatusPill';
import type { AddressMark, InterfaceDiff, RouteDiff } from '../model/live-diff';

const MARK: Record<AddressMark, { text: string; className: string; title: string }> = {
  both: { text: '✓ in CNI result', className: 'mark-ok', title: 'listed by the CNI result and present in the kernel' },
  'kernel-only': {
    text: '+ not in CNI result',
    className: 'mark-warn',
    title: 'present in the kernel, but the CNI result did not list it',
  },
  'kernel-auto': {
    text: 'kernel',
    className: 'mark-muted',
    title: 'added by the kernel itself (link-local or loopback), not by a CNI plugin',
  },
  'cni-only': { text: '✗ missing in kernel', className: 'mark-bad', title: 'listed by the CNI result, but the kernel does not have it' },
};

function stateTone(state?: string) {
  return state === 'UP' ? 'ok' : state === 'DOWN' ? 'bad' : 'muted';
}

/** `ip addr`: each interface, its state and MTU, and each address marked against the CNI result */
export function LiveInterfacesTable({ ifaces }: { ifaces: InterfaceDiff[] }) {
  return (
    <table className="table" data-testid="live-interfaces">
      <thead>
        <tr>
          <th>interface · MAC</th>
          <th>state</th>
          <th>MTU</th>
          <th>addresses</th>
        </tr>
      </thead>
      <tbody>
        {ifaces.map((d) => (
          <tr key={d.name} data-iface={d.name} data-present={d.live !== undefined}>
            <td className="mono">
              <b>{d.name}</b>
              {d.live?.kind && <span className="muted small"> {d.live.kind}</span>}
              {d.live?.mac && <div className="muted small">{d.live.mac}</div>}
            </td>
            <td>{d.live ? <Pill tone={stateTone(d.live.state)}>{d.live.state ?? '?'}</Pill> : <Pill tone="bad">missing</Pill>}</td>
            <td className="mono">{d.live?.mtu ?? '—'}</td>
            <td>
              {d.addresses.length === 0 ? (
                <span className="muted">none</span>
              ) : (
                <ul className="addr-list">
                  {d.addresses.map((a) => {
                    const m = MARK[a.mark];
                    return (
                      <li
                        key={a.address}
                        data-address={a.address}
                        data-mark={a.mark}
                        className={a.mark === 'cni-only' ? 'addr-missing' : undefined}
                      >
                        <span className="mono">
                          {a.address}
                          {a.prefixLen !== undefined && <span className="muted">/{a.prefixLen}</span>}
                        </span>
                        <span className={`addr-mark ${m.className}`} title={m.title}>
                          {a.mark === 'kernel-auto' && a.scope ? `kernel · ${a.scope}` : m.text}
                        </span>
                      </li>
                    );
                  })}
                </ul>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `ip route`: the kernel's routes, each listed in the CNI result or not, then the result's routes the kernel lacks */
export function LiveRoutesTable({ routes }: { routes: RouteDiff }) {
  return (
    <table className="table" data-testid="live-routes">
      <thead>
        <tr>
          <th>destination</th>
          <th>via</th>
          <th>dev</th>
          <th>details</th>
          <th>CNI result</th>
        </tr>
      </thead>
      <tbody>
        {routes.live.map(({ route: r, inCni }, i) => (
          <tr key={`${r.family}-${r.dst}-${i}`} data-dst={r.dst}>
            <td className="mono">
              {r.dst}
              {r.family === 6 && r.dst === 'default' && <span className="muted small"> v6</span>}
            </td>
            <td className="mono">{r.gateway ?? <span className="muted">on-link</span>}</td>
            <td className="mono">{r.dev ?? '—'}</td>
            <td className="mono small muted" title="protocol · scope · metric">
              {[r.protocol, r.scope, r.metric === undefined ? undefined : `metric ${r.metric}`]
                .filter((x) => x !== undefined)
                .join(' · ') || '—'}
            </td>
            <td>
              {inCni ? (
                <span className="addr-mark mark-ok">✓ listed</span>
              ) : (
                <span
                  className="addr-mark mark-muted"
                  title="not in the CNI result: typically the kernel's own route for a connected subnet"
                >
                  {r.protocol === 'kernel' ? 'kernel (connected)' : 'not listed'}
                </span>
              )}
            </td>
          </tr>
        ))}
        {routes.missing.map((r, i) => (
          <tr key={`missing-${i}`} className="row-error" data-dst={r.dst} data-missing="true">
            <td className="mono">{r.dst}</td>
            <td className="mono">{r.gw ?? <span className="muted">plugin default</span>}</td>
            <td colSpan={2} />
            <td>
              <span className="addr-mark mark-bad">✗ missing in kernel</span>
            </td>
          </tr>
        ))}
        {routes.live.length === 0 && routes.missing.length === 0 && (
          <tr>
            <td colSpan={5} className="muted">
              no routes
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}
