/**
 * What the CNI result claimed against what the kernel has now. Pure functions: the components only draw them.
 */
import type { LiveAddress, LiveBandwidthCheck, LiveInterface, LiveRoute } from '../../../../../../shared/domain/live';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';

/** "10.0.0.2/16" → "10.0.0.2"; IPv6 lower-cased (the kernel prints it lower-case and compressed). */
export function bareAddress(a: string): string {
  return a.split('/')[0]!.trim().toLowerCase();
}

export interface ClaimedAddress {
  address: string;
  prefixLen?: number;
  network?: string;
}

/** Addresses the CNI result put on each interface inside the sandbox, keyed by interface name. */
export function cniClaims(s: SandboxStatus): Map<string, ClaimedAddress[]> {
  const out = new Map<string, ClaimedAddress[]>();
  const add = (name: string, c: ClaimedAddress) => {
    const list = out.get(name) ?? [];
    if (!list.some((x) => x.address === c.address)) list.push(c);
    out.set(name, list);
  };
  const fromNetworks = s.networks.some((n) => n.result);
  if (fromNetworks) {
    for (const n of s.networks) {
      const ifaces = n.result?.interfaces ?? [];
      ifaces.forEach((iface, idx) => {
        if (!iface.sandbox) return; // the host end of a veth, the bridge: not inside the netns
        out.set(iface.name, out.get(iface.name) ?? []);
        for (const ip of n.result?.ips ?? []) {
          if (ip.interface !== idx) continue;
          const [addr, prefix] = ip.address.split('/');
          add(iface.name, { address: bareAddress(addr!), prefixLen: prefix ? Number(prefix) : undefined, network: n.network });
        }
      });
    }
    return out;
  }
  // a merged (go-cni style) result: interface name → its IPs
  for (const [name, c] of Object.entries(s.interfaces)) {
    if (!c.sandbox) continue;
    out.set(name, out.get(name) ?? []);
    for (const ip of c.ipConfigs) {
      const [addr, prefix] = ip.ip.split('/');
      add(name, { address: bareAddress(addr!), prefixLen: prefix ? Number(prefix) : undefined });
    }
  }
  return out;
}

export type AddressMark =
  /** in the CNI result and in the kernel */
  | 'both'
  /** in the kernel only, with global scope: someone (or something) added it */
  | 'kernel-only'
  /** in the kernel only, but the kernel puts it there itself (link-local, loopback) */
  | 'kernel-auto'
  /** in the CNI result, not in the kernel */
  | 'cni-only';

export interface AddressDiffRow {
  address: string;
  prefixLen?: number;
  family?: 4 | 6;
  scope?: string;
  mark: AddressMark;
}

export interface InterfaceDiff {
  name: string;
  live?: LiveInterface;
  /** the CNI result listed this interface inside the sandbox */
  claimed: boolean;
  addresses: AddressDiffRow[];
}

const autoScope = (a: LiveAddress) => a.scope === 'link' || a.scope === 'host';

export function diffInterfaces(live: LiveInterface[], claims: Map<string, ClaimedAddress[]>): InterfaceDiff[] {
  const rows: InterfaceDiff[] = live.map((iface) => {
    const claimed = claims.get(iface.name);
    const claimedSet = new Set((claimed ?? []).map((c) => c.address));
    const liveSet = new Set(iface.addresses.map((a) => bareAddress(a.address)));
    const addresses: AddressDiffRow[] = iface.addresses.map((a) => ({
      address: a.address,
      prefixLen: a.prefixLen,
      family: a.family,
      scope: a.scope,
      mark: claimedSet.has(bareAddress(a.address)) ? 'both' : autoScope(a) || !claimed ? 'kernel-auto' : 'kernel-only',
    }));
    for (const c of claimed ?? []) {
      if (!liveSet.has(c.address)) addresses.push({ address: c.address, prefixLen: c.prefixLen, mark: 'cni-only' });
    }
    return { name: iface.name, live: iface, claimed: claimed !== undefined, addresses };
  });
  for (const [name, claimed] of claims) {
    if (live.some((i) => i.name === name)) continue;
    rows.push({ name, claimed: true, addresses: claimed.map((c) => ({ address: c.address, prefixLen: c.prefixLen, mark: 'cni-only' })) });
  }
  return rows;
}

/** Interfaces the CNI result did not create (lo from the loopback plugin still counts as claimed when recorded). */
export function diffCounts(diffs: InterfaceDiff[]): { missing: number; extra: number } {
  let missing = 0;
  let extra = 0;
  for (const d of diffs)
    for (const a of d.addresses) {
      if (a.mark === 'cni-only') missing++;
      if (a.mark === 'kernel-only') extra++;
    }
  return { missing, extra };
}

const DEFAULTS = new Set(['default', '0.0.0.0/0', '::/0']);
/** one key per destination and family: the kernel says "default", a CNI result "0.0.0.0/0" or "::/0" */
const routeKey = (dst: string, family: 4 | 6) => (DEFAULTS.has(dst) ? `default/${family}` : dst.toLowerCase());

export interface RouteDiff {
  live: Array<{ route: LiveRoute; inCni: boolean }>;
  /** routes of the CNI result with no kernel route of the same destination (and gateway, when the result names one) */
  missing: Array<{ dst: string; gw?: string }>;
}

export function diffRoutes(live: LiveRoute[], s: SandboxStatus): RouteDiff {
  const cni = s.networks.some((n) => n.result) ? s.networks.flatMap((n) => n.result?.routes ?? []) : s.routes;
  const matches = (r: LiveRoute, c: { dst: string; gw?: string }) =>
    routeKey(r.dst, r.family) === routeKey(c.dst, c.dst.includes(':') || c.gw?.includes(':') ? 6 : 4) &&
    (c.gw === undefined || bareAddress(c.gw) === (r.gateway ?? '').toLowerCase());
  return {
    live: live.map((route) => ({ route, inCni: cni.some((c) => matches(route, c)) })),
    missing: cni.filter((c) => !live.some((r) => matches(r, c))).map((c) => ({ dst: c.dst, gw: c.gw })),
  };
}

export type BandwidthVerdict =
  /** a tbf with the requested rate */
  | 'applied'
  /** a tbf, but with another rate */
  | 'mismatch'
  /** an annotation, but no tbf on the device */
  | 'missing'
  /** a tbf nobody asked for */
  | 'unexpected'
  /** no annotation, no tbf */
  | 'not-shaped';

export function bandwidthVerdict(c: LiveBandwidthCheck): BandwidthVerdict {
  const req = c.requestedBitsPerSecond;
  const got = c.appliedBitsPerSecond;
  if (req === undefined && got === undefined) return 'not-shaped';
  if (req !== undefined && got === undefined) return 'missing';
  if (req === undefined) return 'unexpected';
  return c.matches ? 'applied' : 'mismatch';
}
