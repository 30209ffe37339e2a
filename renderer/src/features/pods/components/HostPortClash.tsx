/**
 * The pods list's mark for a sandbox that shares a host port/protocol/host_ip with another ready one: only one DNAT
 * rule is ever reached (the first in CNI-HOSTPORT-DNAT), so one of them is not reachable on that port.
 */
import { useMemo } from 'react';
import { conflictingSandboxIds } from '../../../../../shared/domain/probe';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { Pill } from '../../../lib/ui/StatusPill';

export function useHostPortClashes(pods: SandboxSummary[]): Set<string> {
  return useMemo(
    () =>
      conflictingSandboxIds(
        pods.map((p) => ({
          id: p.id,
          name: p.name,
          createdAtNs: p.createdAtNs,
          ready: p.state === 'SANDBOX_READY',
          hostNetwork: p.hostNetwork,
          hostPorts: p.hostPorts,
        })),
      ),
    [pods],
  );
}

export function HostPortClashMark() {
  return (
    <Pill
      tone="warn"
      title="Another ready sandbox maps the same host port: only the first DNAT rule is reached (see the detail's Ports tab)"
    >
      <span data-testid="host-port-clash">clash</span>
    </Pill>
  );
}
