/** Which IP became the pod IP and why, what every preference would have chosen, and the CNI-built network. */
import type { SandboxStatus } from '../../../../../shared/domain/sandbox';
import { IP_PREFERENCES } from '../../../../../shared/domain/config';
import { ipFamily } from '../../../../../shared/domain/ip-selection';
import { EmptyState } from '../../../lib/ui/EmptyState';
import { Section } from '../../../lib/ui/KeyValues';
import { Pill } from '../../../lib/ui/StatusPill';

interface IfaceRow { network: string; name: string; side: 'host' | 'sandbox'; mac?: string; mtu?: number; ips: string[]; gateways: string[] }

function interfaceRows(s: SandboxStatus): IfaceRow[] {
  return s.networks.flatMap((n) =>
    (n.result?.interfaces ?? []).map((iface, idx) => {
      const ips = (n.result?.ips ?? []).filter((ip) => ip.interface === idx);
      return {
        network: n.network,
        name: iface.name,
        side: iface.sandbox ? 'sandbox' : 'host',
        mac: iface.mac,
        mtu: iface.mtu,
        ips: ips.map((i) => i.address),
        gateways: ips.flatMap((i) => (i.gateway ? [i.gateway] : [])),
      } satisfies IfaceRow;
    }),
  );
}

export function NetworkTab({ s }: { s: SandboxStatus }) {
  if (s.hostNetwork) {
    return (
      <EmptyState title="Host network">
        This sandbox shares the host's network namespace (namespace_options.network = NODE). No CNI plugin ran, so there is no pod IP,
        no port mapping and no bandwidth shaping.
      </EmptyState>
    );
  }
  const sel = s.ipSelection;
  const rows = interfaceRows(s);
  return (
    <div className="stack">
      <div className="ip-cards">
        <div className="ip-card ip-card-primary" data-testid="primary-ip">
          <div className="ip-card-label">Pod IP (primary)</div>
          <div className="ip-card-value mono">{s.ip || '—'}</div>
          <div className="ip-card-note">preference <b className="mono">{s.ipPreference}</b></div>
        </div>
        <div className="ip-card" data-testid="additional-ips">
          <div className="ip-card-label">Additional IPs</div>
          <div className="ip-card-value mono">{s.additionalIps.length ? s.additionalIps.map((ip) => <div key={ip}>{ip}</div>) : '—'}</div>
        </div>
        <div className="ip-card ip-card-wide">
          <div className="ip-card-label">Why</div>
          <div className="ip-card-reason">{sel?.reason ?? (s.state === 'SANDBOX_READY' ? 'no CNI result recorded' : 'the sandbox is not ready: its IPs were released by CNI DEL')}</div>
        </div>
      </div>

      {sel && (
        <div className="cols">
          <div className="col">
            <Section title="eth0 addresses in CNI result order">
              <table className="table">
                <thead>
                  <tr><th>#</th><th>address</th><th>family</th><th /></tr>
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
                  <tr><th>preference</th><th>primary</th><th>additional</th></tr>
                </thead>
                <tbody>
                  {IP_PREFERENCES.map((p) => {
                    const alt = sel.alternatives[p];
                    return (
                      <tr key={p} className={p === s.ipPreference ? 'row-current' : undefined} title={alt.reason}>
                        <td className="mono">{p}{p === s.ipPreference && <span className="tag">used</span>}</td>
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
      )}

      <Section title="Interfaces">
        {rows.length === 0 ? (
          <div className="muted">No interfaces recorded{s.state !== 'SANDBOX_READY' ? ' (released on stop)' : ''}.</div>
        ) : (
          <table className="table">
            <thead>
              <tr><th>network</th><th>interface</th><th>side</th><th>MAC</th><th>addresses</th><th>gateway</th><th>MTU</th></tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={`${r.network}-${r.name}-${i}`}>
                  <td className="mono">{r.network}</td>
                  <td className="mono">{r.name}</td>
                  <td><Pill tone={r.side === 'sandbox' ? 'info' : 'muted'}>{r.side}</Pill></td>
                  <td className="mono">{r.mac ?? '—'}</td>
                  <td className="mono">{r.ips.join(', ') || '—'}</td>
                  <td className="mono">{r.gateways.join(', ') || '—'}</td>
                  <td className="mono">{r.mtu ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>

      <div className="cols">
        <div className="col">
          <Section title="Routes">
            {s.routes.length === 0 ? (
              <div className="muted">none</div>
            ) : (
              <table className="table">
                <thead><tr><th>destination</th><th>via</th><th>metric / table</th></tr></thead>
                <tbody>
                  {s.routes.map((r, i) => (
                    <tr key={i}>
                      <td className="mono">{r.dst}</td>
                      <td className="mono">{r.gw ?? <span className="muted">on-link</span>}</td>
                      <td className="mono">{[r.priority, r.table].filter((x) => x !== undefined).join(' / ') || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Section>
        </div>
        <div className="col">
          <Section title="DNS">
            <table className="table">
              <tbody>
                <tr><th>pod config servers</th><td className="mono">{s.config.dns_config?.servers.join(', ') || '—'}</td></tr>
                <tr><th>pod config searches</th><td className="mono">{s.config.dns_config?.searches.join(', ') || '—'}</td></tr>
                <tr><th>pod config options</th><td className="mono">{s.config.dns_config?.options.join(', ') || '—'}</td></tr>
                {s.dns.map((d, i) => (
                  <tr key={i}><th>CNI result {i + 1}</th><td className="mono">{[d.nameservers?.join(', '), d.domain, d.search?.join(' '), d.options?.join(' ')].filter(Boolean).join(' · ') || '—'}</td></tr>
                ))}
              </tbody>
            </table>
          </Section>
        </div>
      </div>
    </div>
  );
}
