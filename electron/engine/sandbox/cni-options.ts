/** What containerd passes to CNI for a sandbox (FACTS C4), rebuilt identically for teardown. */
import type { PodSandboxConfig } from '../../../shared/domain/config';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { toCniPortMappings } from '../../../shared/domain/portmap';
import { PodscopeError } from '../../../shared/domain/errors';
import type { CniNamespaceOptions } from '../cni/types';

export const POD_ANNOTATIONS_CAPABILITY = 'io.kubernetes.cri.pod-annotations';

export function buildCniOptions(id: string, config: PodSandboxConfig): CniNamespaceOptions {
  const m = config.metadata;
  const args: Array<[string, string]> = [
    ['K8S_POD_NAMESPACE', m.namespace],
    ['K8S_POD_NAME', m.name],
    ['K8S_POD_INFRA_CONTAINER_ID', id],
    ['K8S_POD_UID', m.uid],
    ['IgnoreUnknown', '1'],
  ];
  const capabilities: Record<string, unknown> = { [POD_ANNOTATIONS_CAPABILITY]: config.annotations };
  const portMappings = toCniPortMappings(config.port_mappings);
  if (portMappings.length > 0) capabilities.portMappings = portMappings;
  const bw = analyzeBandwidth(config.annotations);
  if (bw.error) {
    throw new PodscopeError('InvalidArgument', `reading pod bandwidth annotations: ${bw.error}`, { details: { ingress: bw.ingress, egress: bw.egress } });
  }
  if (bw.capability) capabilities.bandwidth = bw.capability;
  if (config.dns_config) capabilities.dns = { servers: config.dns_config.servers, searches: config.dns_config.searches, options: config.dns_config.options };
  const cgroupParent = config.linux?.cgroup_parent ?? '';
  if (cgroupParent !== '') capabilities.cgroupPath = cgroupParent;
  return { args, capabilities };
}
