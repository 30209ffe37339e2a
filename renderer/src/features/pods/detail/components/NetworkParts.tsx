/** The Network tab's parts: the pod IP and why, the eth0 addresses and every preference's choice, the interfaces. */
import { IP_PREFERENCES } from '../../../../../../shared/domain/config';
import { ipFamily } from '../../../../../../shared/domain/ip-selection';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';
import { interfaceRows, withKernelMtu } from '../model/interfaces';
import { hhmmss } from '../model/reachability';
import { useLiveNetwork } from './LivePanel';

export function IpCards({ s }: { s: SandboxStatus }) {
  return (
    <div className="ip-cards">
      <div className="ip-card ip-card-primary" data-testid="primary-ip">
        <div className="ip-card-label">Pod IP (primary)</div>
        <div className="ip-card-value mono">{s.ip || '—'}</div>
        <div className="ip-card-note">
          preference <b className="mono">{s.ipPreference}</b>
        </div>
      </div>
      <div className="ip-card" data-testid="additional-ips">
        <div className="ip-card-label">Additional IPs</div>
        <div className="ip-card-value mono">{s.additionalIps.length ? s.additionalIps.map((ip) => <div key={ip}>{ip}</div>) : '—'}</div>
      </div>
      <div className="ip-card ip-card-wide">
        <div className="ip-card-label">Why</div>
        <div className="ip-card-reason">
          {s.ipSelection?.reason ??
            (s.state === 'SANDBOX_READY' ? 'no CNI result recorded' : 'the sandbox is not ready: its IPs were released by CNI DEL')}
        </div>
      </div>
    </div>
  );
}

export function IpSelection({ s }: { s: SandboxStatus }) {
  const sel = s.ipSelection;
  if (!sel) return null;
  return (
    <div className="cols">
      <div className="col">
        <Section title="eth0 addresses in CNI result order">
          <table className="table" data-testid="eth0-ips">
            <thead>
              <tr>
                <th>#</th>
                <th>address</th>
                <th>family</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {sel.eth0Ips.map((ip, i) => (
                <tr key={ip}>
                  <td className="mono muted">{i + 1}</td>
                  <td className="mono">{ip}</td>
                  <td>IPv{ipFamily(ip)}</td>
                  <td>{ip === sel.primary ? <Pill tone="ok">primary</Pill> : <Pill tone="muted">additional</Pill>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      </div>
      <div className="col">
        <Section title="What each preference would choose">
          <table className="table">
            <thead>
              <tr>
                <th>preference</th>
                <th>primary</th>
                <th>additional</th>
              </tr>
            </thead>
            <tbody>
              {IP_PREFERENCES.map((p) => {
                const alt = sel.alternatives[p];
                return (
                  <tr key={p} className={p === s.ipPreference ? 'row-current' : undefined} title={alt.reason}>
                    <td className="mono">
                      {p}
                      {p === s.ipPreference && <span className="tag">used</span>}
                    </td>
                    <td className="mono">{alt.primary || '—'}</td>
                    <td className="mono">{alt.additional.join(', ') || '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Section>
      </div>
    </div>
  );
}

export function Interfaces({ s }: { s: SandboxStatus }) {
  const base = interfaceRows(s);
  // the same query (and cache) as the live panels: a CNI result carries no MTU, the kernel in the pod's netns does
  const { q } = useLiveNetwork(s.id);
  const kernel = s.state === 'SANDBOX_READY' ? q.data : undefined;
  const rows = withKernelMtu(base.rows, kernel);
  const perNetwork = base.perNetwork;
  return (
    <Section title="Interfaces">
      {rows.length === 0 ? (
        <div className="muted">No interfaces recorded{s.state !== 'SANDBOX_READY' ? ' (released on stop)' : ''}.</div>
      ) : (
        <>
          {!perNetwork && (
            <div className="small muted" data-testid="interfaces-source">
              From the runtime's merged CNI result: it does not say which network created each interface.
            </div>
          )}
          <div className="small muted" data-testid="interfaces-mtu-source">
            {kernel ? (
              <>
                MTU of the pod's interfaces read from the kernel in its netns at <b className="mono">{hhmmss(kernel.collectedAt)}</b>
                {rows.some((r) => r.side === 'host' && r.mtuFrom !== 'cni') && "; the host side's is not read here"}.
              </>
            ) : (
              "MTU as the CNI result reports it (most plugins report none): the kernel's is read while the pod's netns can be read."
            )}
          </div>
          <table className="table" data-testid="interfaces">
            <thead>
              <tr>
                {perNetwork && <th>network</th>}
                <th>interface</th>
                <th>side</th>
                <th>MAC</th>
                <th>addresses</th>
                <th>gateway</th>
                <th>MTU</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={`${r.network ?? ''}-${r.name}-${i}`} data-iface={r.name} data-side={r.side}>
                  {perNetwork && <td className="mono">{r.network}</td>}
                  <td className="mono">{r.name}</td>
                  <td>
                    <Pill tone={r.side === 'sandbox' ? 'info' : 'muted'}>{r.side}</Pill>
                  </td>
                  <td className="mono">{r.mac ?? '—'}</td>
                  <td className="mono">{r.ips.join(', ') || '—'}</td>
                  <td className="mono">{r.gateways.join(', ') || '—'}</td>
                  <td
                    className="mono"
                    data-testid="iface-mtu"
                    data-mtu-from={r.mtuFrom}
                    title={
                      r.mtuFrom === 'kernel' && kernel
                        ? `read from the kernel in the pod's netns at ${kernel.collectedAt}`
                        : r.mtuFrom === 'cni'
                          ? 'from the CNI result'
                          : undefined
                    }
                  >
                    {r.mtu ?? '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Section>
  );
}
