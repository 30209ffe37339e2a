/**
 * CRI port mappings → the CNI `portMappings` capability, as containerd's toCNIPortMappings does:
 * entries with host_port <= 0 never reach CNI, protocol becomes its lower-case name, host_ip is kept verbatim.
 */
import { protocolName, type PortMapping } from './config';

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
    const cni: CniPortMapping = { hostPort: mapping.host_port, containerPort: mapping.container_port, protocol: protocolName(mapping.protocol).toLowerCase() };
    if (mapping.host_ip !== '') cni.hostIP = mapping.host_ip;
    return { index, mapping, passed: true, cni };
  });
}

export function toCniPortMappings(mappings: PortMapping[]): CniPortMapping[] {
  return analyzePortMappings(mappings).flatMap((d) => (d.cni ? [d.cni] : []));
}
