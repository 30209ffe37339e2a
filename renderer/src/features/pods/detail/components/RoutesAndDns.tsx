/** The routes of the CNI result and the DNS the pod was configured with and the plugins returned. */
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { Section } from '../../../../lib/ui/KeyValues';

export function RoutesAndDns({ s }: { s: SandboxStatus }) {
  // one entry per network, most of them empty: only the ones that say something
  const cniDns = s.dns
    .map((d) => [d.nameservers?.join(', '), d.domain, d.search?.join(' '), d.options?.join(' ')].filter(Boolean).join(' · '))
    .filter(Boolean);
  return (
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
  );
}
