/** What containerd passes to CNI for a sandbox (docs/semantics.md#cni-options), rebuilt identically for teardown. */
import type { PodSandboxConfig } from '../../../shared/domain/config';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { toCniPortMappings } from '../../../shared/domain/portmap';
import { PodscopeError } from '../../../shared/domain/errors';
import type { CniNamespaceOptions } from '../cni/types';
import { buildCapabilityArgs } from '../cni/capability-args';

export { POD_ANNOTATIONS_CAPABILITY } from '../cni/capability-args';

/**
 * @param opts.lenient for release paths (DEL): never refuse, leave out what does not validate. Otherwise input a
 *   plugin would reject after allocating is refused here, before anything exists.
 */
export function buildCniOptions(id: string, config: PodSandboxConfig, opts: { lenient?: boolean } = {}): CniNamespaceOptions {
  const m = config.metadata;
  if (!opts.lenient) validateForCni(config);
  const args: Array<[string, string]> = [
    ['K8S_POD_NAMESPACE', m.namespace],
    ['K8S_POD_NAME', m.name],
    ['K8S_POD_INFRA_CONTAINER_ID', id],
    ['K8S_POD_UID', m.uid],
    ['IgnoreUnknown', '1'],
  ];
  const bw = analyzeBandwidth(config.annotations);
  if (bw.error && !opts.lenient) {
    throw new PodscopeError('InvalidArgument', `reading pod bandwidth annotations: ${bw.error}`, {
      details: { ingress: bw.ingress, egress: bw.egress },
    });
  }
  const capabilities = buildCapabilityArgs({
    podAnnotations: config.annotations,
    portMappings: toCniPortMappings(config.port_mappings),
    bandwidth: bw.capability,
    dns: config.dns_config,
    cgroupPath: config.linux?.cgroup_parent,
  });
  return { args, capabilities };
}

/** Values every Go plugin would reject on ADD (and then again on DEL), caught before the netns exists. */
function validateForCni(config: PodSandboxConfig): void {
  for (const field of ['name', 'namespace', 'uid'] as const) {
    const v = config.metadata[field];
    if (/[;=]/.test(v)) {
      throw new PodscopeError(
        'InvalidArgument',
        `metadata.${field} ${JSON.stringify(v)} must not contain ';' or '=': it is passed to CNI plugins in CNI_ARGS (K8S_POD_*), which they split on those characters`,
      );
    }
  }
  config.port_mappings.forEach((p, i) => {
    if (p.host_port <= 0) return; // never reaches CNI
    if (p.host_port > 65535)
      throw new PodscopeError('InvalidArgument', `port_mappings[${i}].host_port ${p.host_port} is not a port (1-65535)`);
    if (p.container_port <= 0 || p.container_port > 65535) {
      throw new PodscopeError(
        'InvalidArgument',
        `port_mappings[${i}].container_port ${p.container_port} is not a port (1-65535); portmap would reject it after the pod got its IP`,
      );
    }
  });
}
