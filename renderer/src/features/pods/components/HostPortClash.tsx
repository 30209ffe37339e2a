/**
 * The pods list's mark for a sandbox that shares a host port/protocol/host_ip with another ready one: only one DNAT
 * rule is ever reached (the first in CNI-HOSTPORT-DNAT), so one of them is not reachable on that port.
 */
import { useMemo } from 'react';
import { conflictingSandboxIds } from '../../../../../shared/domain/probe';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { Pill } from '../../../lib/ui/StatusPill';

const clashesOf = (pods: SandboxSummary[]) =>
  conflictingSandboxIds(
    pods.map((p) => ({
      id: p.id,
      name: p.name,
      createdAtNs: p.createdAtNs,
      ready: p.state === 'SANDBOX_READY',
      hostNetwork: p.hostNetwork,
      hostPorts: p.hostPorts,
    })),
  );

export function useHostPortClashes(pods: SandboxSummary[]): Set<string> {
  return useMemo(() => clashesOf(pods), [pods]);
}

/** over several nodes' pods: a host port is one node's (its own netns and DNAT chain), so pods clash only on one node */
export function useHostPortClashesByNode(byNode: Map<string, SandboxSummary[]>): Set<string> {
  return useMemo(() => {
    if (byNode.size <= 1) return clashesOf([...byNode.values()][0] ?? []);
    const out = new Set<string>();
    for (const pods of byNode.values()) for (const id of clashesOf(pods)) out.add(id);
    return out;
  }, [byNode]);
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
