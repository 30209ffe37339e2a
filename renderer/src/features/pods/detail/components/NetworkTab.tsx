/** Which IP became the pod IP and why, what every preference would have chosen, and the CNI-built network. */
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { IP_PREFERENCES } from '../../../../../../shared/domain/config';
import { ipFamily } from '../../../../../../shared/domain/ip-selection';
import { EmptyState } from '../../../../lib/ui/EmptyState';
import { Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';
import { LiveNetwork } from './LiveNetwork';
import { TopologyView } from './TopologyView';

interface IfaceRow {
  network?: string;
  name: string;
  side: 'host' | 'sandbox';
  mac?: string;
  mtu?: number;
  ips: string[];
  gateways: string[];
}

/**
 * Podscope's engine keeps every network's CNI result, so each interface is shown under its network. A foreign
 * runtime (containerd) only exposes the merged result (go-cni's per-interface map): its interfaces are shown as
 * they are, without a network name rather than with a guessed one.
 */
function interfaceRows(s: SandboxStatus): { rows: IfaceRow[]; perNetwork: boolean } {
  const fromNetworks = s.networks.flatMap((n) =>
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
  if (fromNetworks.length > 0 || s.networks.length > 0) return { rows: fromNetworks, perNetwork: true };
  const merged = Object.entries(s.interfaces).map(([name, c]): IfaceRow => ({
    name,
    side: c.sandbox ? 'sandbox' : 'host',
    mac: c.mac,
    ips: c.ipConfigs.map((i) => i.ip),
    gateways: [...new Set(c.ipConfigs.flatMap((i) => (i.gateway ? [i.gateway] : [])))],
  }));
  // the pod's own interfaces first, like `ip addr` inside the netns, then the host side
  merged.sort((a, b) => (a.side === b.side ? a.name.localeCompare(b.name) : a.side === 'sandbox' ? -1 : 1));
  return { rows: merged, perNetwork: false };
}

export function NetworkTab({ s }: { s: SandboxStatus }) {
  if (s.hostNetwork) {
    return (
      <div className="stack">
        <EmptyState title="Host network">
          This sandbox shares the host's network namespace (namespace_options.network = NODE). No CNI plugin ran, so there is no pod IP, no
          port mapping and no bandwidth shaping.
        </EmptyState>
        <LiveNetwork s={s} />
      </div>
    );
  }
  const sel = s.ipSelection;
  const { rows, perNetwork } = interfaceRows(s);
  // one entry per network, most of them empty: only the ones that say something
  const cniDns = s.dns
    .map((d) => [d.nameservers?.join(', '), d.domain, d.search?.join(' '), d.options?.join(' ')].filter(Boolean).join(' · '))
    .filter(Boolean);
  return (
    <div className="stack">
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
            {sel?.reason ??
              (s.state === 'SANDBOX_READY' ? 'no CNI result recorded' : 'the sandbox is not ready: its IPs were released by CNI DEL')}
          </div>
        </div>
      </div>

      {s.netnsClosed && !s.hostNetwork && s.networks.length > 0 && (
        <div className="small muted" data-testid="cni-result-released">
          Below is the last CNI result, kept for inspection: the addresses were released by CNI DEL when the sandbox stopped
          {s.stoppedAt ? ` (${new Date(s.stoppedAt).toLocaleTimeString()})` : ''}, and the namespace is gone.
        </div>
      )}

      {sel && (
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
      )}

      <Section title="Interfaces">
        {rows.length === 0 ? (
          <div className="muted">No interfaces recorded{s.state !== 'SANDBOX_READY' ? ' (released on stop)' : ''}.</div>
        ) : (
          <>
            {!perNetwork && (
              <div className="small muted" data-testid="interfaces-source">
                From the runtime's merged CNI result: it does not say which network created each interface, and reports no MTU.
              </div>
            )}
            <table className="table" data-testid="interfaces">
              <thead>
                <tr>
                  {perNetwork && <th>network</th>}
                  <th>interface</th>
                  <th>side</th>
                  <th>MAC</th>
                  <th>addresses</th>
                  <th>gateway</th>
                  {perNetwork && <th>MTU</th>}
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
                    {perNetwork && <td className="mono">{r.mtu ?? '—'}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Section>

      <TopologyView s={s} />
      <LiveNetwork s={s} />

      <div className="cols">
        <div className="col">
          <Section title="Routes">
            {s.routes.length === 0 ? (
              <div className="muted">none</div>
            ) : (
              <table className="table">
                <thead>
                  <tr>
                    <th>destination</th>
                    <th>via</th>
                    <th>metric / table</th>
                  </tr>
                </thead>
                <tbody>
                  {s.routes.map((r, i) => (
                    <tr key={i}>
                      <td className="mono">{r.dst}</td>
                      <td className="mono">
                        {r.gw ?? (
                          // CNI spec: an omitted gw means "a default gateway, as determined by the plugin" — not on-link
                          <span
                            className="muted"
                            title="no gw in the CNI result: the plugin's default gateway for this family (the bridge plugin uses its gateway IP)"
                          >
                            default gateway
                          </span>
                        )}
                      </td>
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
                <tr>
                  <th>pod config servers</th>
                  <td className="mono">{s.config.dns_config?.servers.join(', ') || '—'}</td>
                </tr>
                <tr>
                  <th>pod config searches</th>
                  <td className="mono">{s.config.dns_config?.searches.join(', ') || '—'}</td>
                </tr>
                <tr>
                  <th>pod config options</th>
                  <td className="mono">{s.config.dns_config?.options.join(', ') || '—'}</td>
                </tr>
                {cniDns.map((d, i) => (
                  <tr key={i}>
                    <th>CNI result DNS{cniDns.length > 1 ? ` ${i + 1}` : ''}</th>
                    <td className="mono">{d}</td>
                  </tr>
                ))}
                {cniDns.length === 0 && (
                  <tr>
                    <th>CNI result DNS</th>
                    <td className="mono">—</td>
                  </tr>
                )}
              </tbody>
            </table>
          </Section>
        </div>
      </div>
    </div>
  );
}
