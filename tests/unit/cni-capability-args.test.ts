/**
 * The one capability-args builder, as the sandbox runtime reaches it (buildCniOptions from a pod config) and as the
 * lab does (its capability flags): containerd's shapes, empty lists left out, the unset burst of a direction with a
 * rate 2^32-1, and the same value for the same input whichever door it came through.
 */
import { describe, expect, it } from 'vitest';
import { buildCapabilityArgs, POD_ANNOTATIONS_CAPABILITY } from '../../electron/engine/cni/capability-args';
import { buildCniOptions } from '../../electron/engine/pods/cni-options';
import { PodSandboxConfigSchema } from '../../shared/domain/config';

const ID = 'a'.repeat(64);

describe('capability args', () => {
  it('a pod config gives its annotations, TCP/UDP host-port mappings (container-port-only ones left out), bandwidth, DNS and cgroup parent', () => {
    const config = PodSandboxConfigSchema.parse({
      metadata: { name: 'web', namespace: 'default', uid: 'u1' },
      port_mappings: [
        { container_port: 80, host_port: 8080, host_ip: '127.0.0.1' },
        { container_port: 53, host_port: 5353, protocol: 'UDP' },
        { container_port: 9000 },
      ],
      annotations: { 'kubernetes.io/egress-bandwidth': '2M', team: 'a' },
      dns_config: { servers: ['10.0.0.10'], searches: ['svc.local'] },
      linux: { cgroup_parent: '/kubepods/pod-u1' },
    });
    expect(buildCniOptions(ID, config).capabilities).toEqual({
      [POD_ANNOTATIONS_CAPABILITY]: { 'kubernetes.io/egress-bandwidth': '2M', team: 'a' },
      portMappings: [
        { hostPort: 8080, containerPort: 80, protocol: 'tcp', hostIP: '127.0.0.1' },
        { hostPort: 5353, containerPort: 53, protocol: 'udp' },
      ],
      bandwidth: { ingressRate: 0, ingressBurst: 0, egressRate: 2_000_000, egressBurst: 4294967295 },
      dns: { servers: ['10.0.0.10'], searches: ['svc.local'], options: [] },
      cgroupPath: '/kubepods/pod-u1',
    });
    // nothing set: only the (empty) annotations, which containerd always passes
    const bare = PodSandboxConfigSchema.parse({ metadata: { name: 'w', namespace: 'd', uid: 'u' } });
    expect(buildCniOptions(ID, bare).capabilities).toEqual({ [POD_ANNOTATIONS_CAPABILITY]: {} });
  });

  it('the lab flags and a pod config with the same values build the same args', () => {
    const fromPod = buildCniOptions(
      ID,
      PodSandboxConfigSchema.parse({
        metadata: { name: 'web', namespace: 'default', uid: 'u1' },
        port_mappings: [{ container_port: 80, host_port: 8080 }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '1M' },
      }),
    ).capabilities;
    const fromLab = buildCapabilityArgs({
      portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp', hostIP: '' }],
      bandwidth: { ingressRate: 1_000_000 },
    });
    const { [POD_ANNOTATIONS_CAPABILITY]: _annotations, ...podArgs } = fromPod;
    expect(fromLab).toEqual(podArgs);
  });
});
