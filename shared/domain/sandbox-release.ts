/** Words shared by the UI and the CLI for why a pod is NOTREADY and what Stop will release. Pure functions. */
import type { PauseExit, PendingCleanup, SandboxStatus } from './sandbox';

export function describePauseExit(e: PauseExit): string {
  const how = e.signal
    ? `with signal ${e.signal}`
    : e.exitCode !== undefined
      ? `with code ${e.exitCode}`
      : `(${e.note ?? 'exit status not observable'})`;
  return `pause exited ${how} at ${e.finishedAt ?? e.at}`;
}

/** "CNI DEL of bridge #0 on net/eth0", or the step */
export function pendingWhat(p: PendingCleanup): string {
  return p.kind === 'cni'
    ? `CNI DEL of ${p.plugin || 'plugin'}${p.index !== undefined && p.index >= 0 ? ` #${p.index}` : ''}${p.network ? ` on ${p.network}/${p.ifName}` : ''}`
    : p.plugin;
}

export function describePendingEntry(p: PendingCleanup): string {
  return `${pendingWhat(p)}${p.holds.length > 0 ? ` (holds ${p.holds.join('; ')})` : ''}: ${p.error}`;
}

/**
 * What a stop of this sandbox would release now, one item per line. containerd's StopPodSandbox releases the network
 * (netns, IPs, DNAT, shaping) of a NOTREADY sandbox too, so this is not empty just because the pause exited.
 */
export function whatStopReleases(s: SandboxStatus): string[] {
  const out: string[] = [];
  if (s.cleanupPending?.length) out.push(...s.cleanupPending.filter((p) => p.kind !== 'netns').map((p) => `retry: ${pendingWhat(p)}`));
  if (s.pause.status !== 'stopped' && s.pause.status !== 'deleted')
    out.push(`pause container ${s.pause.containerId} (kill) and its /dev/shm mount`);
  if (!s.hostNetwork && !s.netnsClosed) {
    const ips = s.ipSelection?.eth0Ips ?? [s.ip, ...s.additionalIps].filter(Boolean);
    if (!s.cleanupPending?.some((p) => p.kind === 'cni')) {
      out.push(`CNI DEL of every network${ips.length > 0 ? `: addresses ${ips.join(', ')}` : ''}`);
      if (s.hostPorts.length > 0)
        out.push(`host port DNAT ${s.hostPorts.map((p) => `${p.hostPort}/${p.protocol}→${p.containerPort}`).join(', ')}`);
      if (s.bandwidth.ingress || s.bandwidth.egress) out.push('bandwidth shaping (tbf/ifb)');
    }
    if (s.netnsPath) out.push(`network namespace ${s.netnsPath}`);
  }
  return out;
}
