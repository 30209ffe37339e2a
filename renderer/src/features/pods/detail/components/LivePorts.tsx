/** Per requested port mapping: the DNAT rule in the host's nat table now, verbatim, or why there is none. */
import type { PortMappingDecision } from '../../../../../../shared/domain/portmap';
import { protocolName } from '../../../../../../shared/domain/config';
import type { HostPortConflict } from '../../../../../../shared/domain/probe';
import { LivePanel } from './LivePanel';

/**
 * `conflicts` and `ready` keep a rule that is present from reading as "works": a rule shadowed by another pod's
 * earlier jump, or one that DNATs to a pod whose pause is gone, is never marked green.
 */
export function LivePorts({
  id,
  decisions,
  conflicts = [],
  ready = true,
}: {
  id: string;
  decisions: PortMappingDecision[];
  conflicts?: HostPortConflict[];
  ready?: boolean;
}) {
  const shadowedBy = (hostPort: number, proto: string) =>
    conflicts.find((x) => x.hostPort === hostPort && x.protocol === proto && x.winner !== id)?.winner;
  return (
    <LivePanel
      id={id}
      testId="live-ports"
      title="Live in the nat table: DNAT rules now"
      subtitle="What portmap's rules look like in iptables/ip6tables -t nat -S on the host at this moment."
    >
      {(view) => (
        <table className="table live-ports" data-testid="live-port-rows">
          <thead>
            <tr>
              <th>#</th>
              <th>mapping</th>
              <th>in the kernel</th>
              <th>DNAT rule (verbatim)</th>
            </tr>
          </thead>
          <tbody>
            {decisions.map((d) => {
              const c = view.ports.find((p) => p.index === d.index);
              const proto = (c?.protocol ?? protocolName(d.mapping.protocol)).toLowerCase();
              return (
                <tr key={d.index} data-index={d.index} data-found={c?.found ?? false} data-passed={d.passed}>
                  <td className="mono muted">{d.index}</td>
                  <td className="mono nowrap">
                    {d.mapping.host_port}→{d.mapping.container_port}/{proto}
                  </td>
                  <td className="nowrap">
                    {!d.passed ? (
                      <span className="addr-mark mark-muted">none expected</span>
                    ) : c?.found && shadowedBy(d.mapping.host_port, proto) ? (
                      <span
                        className="addr-mark mark-bad"
                        data-testid="dnat-shadowed"
                        title={`the DNAT jump of sandbox ${shadowedBy(d.mapping.host_port, proto)} comes first in CNI-HOSTPORT-DNAT`}
                      >
                        ✗ rule found, shadowed by {shadowedBy(d.mapping.host_port, proto)!.slice(0, 12)}
                      </span>
                    ) : c?.found && !ready ? (
                      <span className="addr-mark mark-muted">rule found; the pod is not ready, nothing answers</span>
                    ) : c?.found ? (
                      <span className="addr-mark mark-ok">✓ DNAT rule found</span>
                    ) : (
                      <span className="addr-mark mark-bad">✗ no DNAT rule found</span>
                    )}
                  </td>
                  <td>
                    {c?.rules.length ? (
                      // one per family: a dual-stack pod's mapping has an iptables and an ip6tables DNAT
                      c.rules.map((rule) => (
                        <code key={rule} className="rule" data-testid="dnat-rule">
                          {rule}
                        </code>
                      ))
                    ) : !d.passed ? (
                      <span className="muted small">
                        host_port {d.mapping.host_port}: never passed to portmap, so no DNAT rule is expected; reach it on the pod IP, port{' '}
                        {d.mapping.container_port}.
                      </span>
                    ) : (
                      <span className="text-bad small">no DNAT rule found for host port {d.mapping.host_port}</span>
                    )}
                    {d.passed && c?.note && <div className="small muted live-port-note">{c.note}</div>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </LivePanel>
  );
}
