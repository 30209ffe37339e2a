/** Every requested port mapping; those that never reached CNI are marked and explained. */
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { protocolName } from '../../../../../../shared/domain/config';
import { EmptyState } from '../../../../lib/ui/EmptyState';
import { JsonView, parseMaybeJson } from '../../../../lib/ui/JsonView';
import { Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';
import { LivePorts } from './LivePorts';
import { HostPortConflicts } from './HostPortConflicts';

export function PortsTab({ s, traced = true, runtime }: { s: SandboxStatus; traced?: boolean; runtime?: string }) {
  if (s.portMappings.length === 0) {
    return (
      <div className="stack">
        <EmptyState title="No port mappings requested">
          port_mappings is empty in this sandbox's config, so portmap received no runtimeConfig.
        </EmptyState>
      </div>
    );
  }
  // What portmap really received: its recorded stdin, not a recomputation.
  const sent = s.trace
    .filter((t) => t.plugin?.type === 'portmap' && t.plugin.verb === 'ADD')
    .map((t) => ({
      network: `${t.plugin!.network}/${t.plugin!.ifName}`,
      pm: (parseMaybeJson(t.plugin!.stdin) as { runtimeConfig?: { portMappings?: unknown } })?.runtimeConfig?.portMappings,
    }))
    .filter((x) => x.pm !== undefined);
  return (
    <div className="stack">
      <HostPortConflicts s={s} />
      {!traced && (
        <div className="small muted" data-testid="ports-derived">
          Outcomes are derived from the sandbox's stored config with containerd's rules; {runtime ?? 'this runtime'} does not expose what
          the portmap plugin actually received.
        </div>
      )}
      <table className="table" data-testid="port-mappings">
        <thead>
          <tr>
            <th>#</th>
            <th>protocol</th>
            <th>container port</th>
            <th>host port</th>
            <th>host IP</th>
            <th>outcome</th>
            <th>{traced ? 'sent to CNI' : 'would be sent to CNI'}</th>
          </tr>
        </thead>
        <tbody>
          {s.portMappings.map((d) => (
            <tr key={d.index} className={d.passed ? undefined : 'row-dropped'} data-passed={d.passed}>
              <td className="mono muted">{d.index}</td>
              <td className="mono">{protocolName(d.mapping.protocol)}</td>
              <td className="mono">{d.mapping.container_port}</td>
              <td className="mono">{d.mapping.host_port}</td>
              <td className="mono">{d.mapping.host_ip || <span className="muted">all</span>}</td>
              <td>
                {d.passed ? (
                  <Pill tone="ok">passed to portmap</Pill>
                ) : (
                  <div className="dropped">
                    <Pill tone="warn">dropped before CNI</Pill>
                    <div className="reason">{d.reason}</div>
                  </div>
                )}
              </td>
              <td className="mono">{d.cni ? JSON.stringify(d.cni) : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <LivePorts id={s.id} decisions={s.portMappings} conflicts={s.hostPortConflicts} ready={s.state === 'SANDBOX_READY'} />
      {sent.length > 0 && (
        <Section title="runtimeConfig.portMappings the portmap plugin received">
          {sent.map((x) => (
            <div key={x.network}>
              <div className="muted small mono">{x.network}</div>
              <JsonView value={x.pm} />
            </div>
          ))}
        </Section>
      )}
    </div>
  );
}
