/**
 * go-cni createResult: folds every network's 1.x result into one per-interface view. eth0 is pre-seeded so IPs
 * without an interface index always have a home; a later network's interface entry replaces an earlier one of the
 * same name (IPs included), exactly like go-cni's map assignment.
 */
import type { CniDns, CniResult, CniRoute, InterfaceConfig } from '../../../shared/domain/cni';

export interface CombinedResult {
  interfaces: Record<string, InterfaceConfig>;
  routes: CniRoute[];
  dns: CniDns[];
}

export const DEFAULT_INTERFACE = 'eth0';

export function createResult(results: CniResult[]): CombinedResult {
  const interfaces: Record<string, InterfaceConfig> = { [DEFAULT_INTERFACE]: { ipConfigs: [] } };
  const routes: CniRoute[] = [];
  const dns: CniDns[] = [];
  for (const result of results) {
    const ifs = result.interfaces ?? [];
    for (const i of ifs) {
      const entry: InterfaceConfig = { ipConfigs: [] };
      if (i.mac !== undefined) entry.mac = i.mac;
      if (i.sandbox !== undefined) entry.sandbox = i.sandbox;
      interfaces[i.name] = entry;
    }
    for (const ip of result.ips ?? []) {
      // go-cni's bound check is off by one and would then panic; an out-of-range index is an invalid result here
      if (ip.interface !== undefined && ip.interface >= ifs.length) {
        throw new Error(
          `invalid interface config: invalid IP configuration (interface number ${ip.interface} is out of range for ${ifs.length} interfaces): invalid result`,
        );
      }
      const name = ip.interface !== undefined ? ifs[ip.interface]!.name : DEFAULT_INTERFACE;
      const target = (interfaces[name] ??= { ipConfigs: [] });
      target.ipConfigs.push({ ip: ip.address.split('/')[0]!, ...(ip.gateway ? { gateway: ip.gateway } : {}) });
    }
    dns.push(result.dns ?? {});
    routes.push(...(result.routes ?? []));
  }
  return { interfaces, routes, dns };
}
