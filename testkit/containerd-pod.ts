/**
 * A pod as kubelet would make it through containerd (the test kit's fixture): a host port (portmap), bandwidth
 * annotations (the bandwidth plugin) and a busybox httpd container serving on the pod's port 80. Driven with the
 * project's own CRI client, as crictl is not available from Debian. The image comes from a local archive.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildBusyboxImage, writeDockerSave } from './busybox-image';
import type { ContainerdFixture } from './containerd-fixture';
import { until } from './until';

export const HTTPD_IMAGE = 'podscope.test/busybox:1';

export interface ContainerdHttpdPod {
  podId: string;
  containerId: string;
  hostPort: number;
  config: Record<string, unknown>;
}

/** Imports the busybox image into the fixture's containerd (once per fixture). */
export function importBusybox(ctd: ContainerdFixture): void {
  const tar = join(ctd.dir, 'busybox.tar');
  writeDockerSave(tar, [{ image: buildBusyboxImage(), repoTags: [HTTPD_IMAGE] }]);
  execFileSync('/usr/bin/ctr', ['-a', ctd.socketPath, '-n', 'k8s.io', 'images', 'import', tar], { stdio: ['ignore', 'pipe', 'pipe'] });
}

export async function runHttpdPod(
  ctd: ContainerdFixture,
  opts: {
    name: string;
    hostPort: number;
    ingress?: string;
    egress?: string;
    /**
     * the pod's dns_config. Absent: one with an option only, which gets a resolv.conf naming no nameserver — this
     * host's own nameserver is not an address a test may send to, and a probe would query it. 'host': no dns_config,
     * so containerd copies its host's resolv.conf (a test that does must not probe it as it is).
     */
    dns?: { servers: string[]; searches: string[]; options: string[] } | 'host';
  },
): Promise<ContainerdHttpdPod> {
  const config = {
    metadata: { name: opts.name, namespace: 'default', uid: `${opts.name}-uid` },
    hostname: opts.name,
    port_mappings: [{ protocol: 0, container_port: 80, host_port: opts.hostPort }],
    annotations: {
      'kubernetes.io/ingress-bandwidth': opts.ingress ?? '10M',
      'kubernetes.io/egress-bandwidth': opts.egress ?? '10M',
    },
    ...(opts.dns !== 'host' && { dns_config: opts.dns ?? { servers: [], searches: [], options: ['ndots:1'] } }),
  };
  const { id: podId } = await ctd.api.run({ config });
  const { id: containerId } = await ctd.api.createContainer({
    podSandboxId: podId,
    config: {
      metadata: { name: 'httpd' },
      image: { image: HTTPD_IMAGE },
      command: ['httpd', '-f', '-p', '80', '-h', '/tmp'],
    },
    sandboxConfig: config,
  });
  await ctd.api.startContainer(containerId);
  await until(async () => (await ctd.api.containerStatus(containerId)).state === 'CONTAINER_RUNNING', {
    what: 'the httpd container running in containerd',
  });
  return { podId, containerId, hostPort: opts.hostPort, config };
}
