/** The interfaces of a pod's CNI result as table rows, per network when the runtime kept each network's result. */
import type { LiveNetworkView } from '../../../../../../shared/domain/live';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';

export interface IfaceRow {
  network?: string;
  name: string;
  side: 'host' | 'sandbox';
  mac?: string;
  mtu?: number;
  /** where `mtu` came from: the kernel in the pod's netns (at the live view's collectedAt) or the CNI result */
  mtuFrom?: 'kernel' | 'cni';
  ips: string[];
  gateways: string[];
}

/**
 * Podscope's engine keeps every network's CNI result, so each interface is shown under its network. A foreign
 * runtime (containerd) only exposes the merged result (go-cni's per-interface map): its interfaces are shown as
 * they are, without a network name rather than with a guessed one.
 */
export function interfaceRows(s: SandboxStatus): { rows: IfaceRow[]; perNetwork: boolean } {
  const fromNetworks = s.networks.flatMap((n) =>
    (n.result?.interfaces ?? []).map((iface, idx) => {
      const ips = (n.result?.ips ?? []).filter((ip) => ip.interface === idx);
      return {
        network: n.network,
        name: iface.name,
        side: iface.sandbox ? 'sandbox' : 'host',
        mac: iface.mac,
        mtu: iface.mtu,
        ...(iface.mtu !== undefined ? { mtuFrom: 'cni' as const } : {}),
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

/**
 * The pod-side rows' MTU from the kernel (the live view of its netns, by interface name): CNI results almost never
 * carry one, and the kernel's is what the probe's MTU audit compares with. Host-side rows keep the result's: the live
 * view reads the pod's netns only.
 */
export function withKernelMtu(rows: IfaceRow[], view: Pick<LiveNetworkView, 'interfaces'> | undefined): IfaceRow[] {
  if (!view) return rows;
  const byName = new Map(view.interfaces.map((i) => [i.name, i.mtu]));
  return rows.map((r) => {
    const mtu = r.side === 'sandbox' ? byName.get(r.name) : undefined;
    return mtu === undefined ? r : { ...r, mtu, mtuFrom: 'kernel' };
  });
}
