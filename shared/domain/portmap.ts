/**
 * CRI port mappings → the CNI `portMappings` capability, as containerd's toCNIPortMappings does:
 * entries with host_port <= 0 never reach CNI, protocol becomes its lower-case name, host_ip is kept verbatim.
 */
import { protocolName, type PortMapping } from './config';
import type { CniNetworkView } from './cni';
import { ipFamilyOf } from './ip';
import { ipFamily } from './ip-selection';

export interface CniPortMapping {
  hostPort: number;
  containerPort: number;
  protocol: string;
  hostIP?: string;
}

export interface PortMappingDecision {
  index: number;
  mapping: PortMapping;
  passed: boolean;
  /** why it was dropped before CNI; absent when passed */
  reason?: string;
  cni?: CniPortMapping;
}

export function analyzePortMappings(mappings: PortMapping[]): PortMappingDecision[] {
  return mappings.map((mapping, index) => {
    if (mapping.host_port <= 0) {
      return {
        index,
        mapping,
        passed: false,
        reason: `host_port ${mapping.host_port} ≤ 0: a container-port-only mapping is not passed to CNI (containerd toCNIPortMappings); the port is reachable only on the pod IP`,
      };
    }
    const cni: CniPortMapping = {
      hostPort: mapping.host_port,
      containerPort: mapping.container_port,
      protocol: protocolName(mapping.protocol).toLowerCase(),
    };
    if (mapping.host_ip !== '') cni.hostIP = mapping.host_ip;
    return { index, mapping, passed: true, cni };
  });
}

export function toCniPortMappings(mappings: PortMapping[]): CniPortMapping[] {
  return analyzePortMappings(mappings).flatMap((d) => (d.cni ? [d.cni] : []));
}

/**
 * The address families a CNI network can give a pod, when its conflist says so for certain: every plugin that has
 * an `ipam` uses host-local with `ranges` (or the legacy `subnet`) whose subnets all parse. Anything else (dhcp,
 * static, whereabouts, a delegating plugin, no IPAM at all) is undefined: unknown, so nothing is refused for it.
 */
export function networkFamilies(network: CniNetworkView): Set<4 | 6> | undefined {
  const families = new Set<4 | 6>();
  let ipams = 0;
  for (const plugin of network.plugins) {
    const ipam = plugin.raw.ipam as Record<string, unknown> | undefined;
    if (ipam === undefined) continue;
    ipams++;
    if (typeof ipam !== 'object' || ipam === null || ipam.type !== 'host-local') return undefined;
    const subnets: unknown[] = [];
    if (Array.isArray(ipam.ranges))
      for (const set of ipam.ranges)
        (Array.isArray(set) ? set : [undefined]).forEach((r) => subnets.push((r as { subnet?: unknown } | undefined)?.subnet));
    if (ipam.subnet !== undefined) subnets.push(ipam.subnet);
    if (subnets.length === 0) return undefined;
    for (const s of subnets) {
      const family = typeof s === 'string' ? ipFamilyOf(s.split('/')[0] ?? '') : 0;
      if (family === 0) return undefined;
      families.add(family);
    }
  }
  return ipams > 0 ? families : undefined;
}

/**
 * Mappings whose host_ip is of a family no portmap-carrying network can give the pod. portmap skips such an entry
 * without an error (it only installs rules of the container IP's family), so the port would silently not be mapped.
 * Refused only when every network that declares the portMappings capability has known families.
 */
export function hostIpFamilyProblems(mappings: PortMapping[], networks: CniNetworkView[]): Array<{ index: number; message: string }> {
  const carrying = networks.filter((n) => n.plugins.some((p) => p.capabilities.includes('portMappings')));
  if (carrying.length === 0) return [];
  const known = carrying.map(networkFamilies);
  if (known.some((f) => f === undefined)) return [];
  const families = new Set(known.flatMap((f) => [...f!]));
  const out: Array<{ index: number; message: string }> = [];
  analyzePortMappings(mappings).forEach((d) => {
    const ip = d.cni?.hostIP;
    if (!ip || ipFamilyOf(ip) === 0) return;
    const family = ipFamily(ip); // an IPv4-mapped IPv6 address counts as IPv4, as Go's To4() does
    if (!families.has(family)) {
      out.push({
        index: d.index,
        message: `${ip} is an IPv${family} address, but the pod's network${carrying.length > 1 ? 's' : ''} (${carrying.map((n) => n.name).join(', ')}) give${carrying.length > 1 ? '' : 's'} it only IPv${[...families].join(' and IPv')} addresses; portmap would skip the mapping without an error`,
      });
    }
  });
  return out;
}
