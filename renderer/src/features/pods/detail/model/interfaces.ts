/** The interfaces of a pod's CNI result as table rows, per network when the runtime kept each network's result. */
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';

export interface IfaceRow {
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
