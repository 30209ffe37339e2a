/**
 * Pod IP selection exactly as containerd's selectPodIPs (docs/semantics.md#pod-ip-selection): input is eth0's IPs in CNI order.
 */
import type { IpPreference } from './config';

export interface IpSelection {
  preference: IpPreference;
  primary: string;
  additional: string[];
  reason: string;
}

export function ipFamily(ip: string): 4 | 6 {
  if (!ip.includes(':')) return 4;
  // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) counts as IPv4, as Go's net.IP.To4() does.
  return /^(0{0,4}:){0,5}:?ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? 4 : 6;
}

export function selectPodIPs(ips: string[], preference: IpPreference): IpSelection {
  if (ips.length === 0) return { preference, primary: '', additional: [], reason: 'eth0 has no IP' };
  if (ips.length === 1)
    return { preference, primary: ips[0]!, additional: [], reason: 'eth0 has exactly one IP: it is primary whatever the preference' };
  if (preference === 'cni')
    return { preference, primary: ips[0]!, additional: ips.slice(1), reason: 'preference cni: the first IP in CNI result order' };
  const want = preference === 'ipv6' ? 6 : 4;
  const idx = ips.findIndex((ip) => ipFamily(ip) === want);
  if (idx < 0) {
    return {
      preference,
      primary: ips[0]!,
      additional: ips.slice(1),
      reason: `preference ${preference}: no IPv${want} address on eth0, so the first IP in CNI order`,
    };
  }
  return {
    preference,
    primary: ips[idx]!,
    additional: [...ips.slice(0, idx), ...ips.slice(idx + 1)],
    reason: `preference ${preference}: the first IPv${want} address on eth0 (position ${idx + 1} of ${ips.length} in CNI order)`,
  };
}

export function selectForEveryPreference(ips: string[]): Record<IpPreference, IpSelection> {
  return { ipv4: selectPodIPs(ips, 'ipv4'), ipv6: selectPodIPs(ips, 'ipv6'), cni: selectPodIPs(ips, 'cni') };
}
