/**
 * A real pod with a busybox container for the container-screen specs: a busybox image built offline
 * (testkit/busybox-image.ts) served by a registry on 127.0.0.1 (testkit/registry.ts), pulled by the engine's own
 * store, a pod on the e2e network with a log directory under the run's temp dir, and one container in it.
 * `dispose` stops and removes the container and the pod and closes the registry, even when the spec failed.
 */
import { join } from 'node:path';
import { buildBusyboxImage } from '../../testkit/busybox-image';
import { startTestRegistry, type TestRegistry } from '../../testkit/registry';
import type { SandboxEnv } from './sandbox-env';

export interface BusyboxPod {
  podId: string;
  podName: string;
  containerId: string;
  containerName: string;
  image: string;
  logDir: string;
  registry: TestRegistry;
  dispose(): Promise<void>;
}

export async function startBusyboxPod(env: SandboxEnv, opts: { name: string; command: string[] }): Promise<BusyboxPod> {
  const registry = await startTestRegistry();
  const cleanups: Array<() => Promise<unknown>> = [() => registry.close()];
  const dispose = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    registry.putImage('library/busybox', '1', buildBusyboxImage());
    const image = `${registry.host}/library/busybox:1`;
    if (!env.engine.images) throw new Error('the e2e engine has no image store');
    await env.engine.images.pull(image);
    const logDir = join(env.root, 'pod-logs', opts.name);
    const { id: podId } = await env.engine.run({
      config: { metadata: { name: opts.name, namespace: 'e2e', uid: `uid-${opts.name}` }, hostname: opts.name, log_directory: logDir },
    });
    cleanups.push(async () => {
      await env.engine.stop(podId);
      await env.engine.remove(podId);
    });
    const containerName = 'box';
    const { id: containerId } = await env.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: containerName }, image: { image }, command: opts.command, log_path: `${containerName}_0.log` },
    });
    cleanups.push(async () => {
      await env.engine.stopContainer(containerId, 0).catch(() => {});
      await env.engine.removeContainer(containerId);
    });
    await env.engine.startContainer(containerId);
    return { podId, podName: opts.name, containerId, containerName, image, logDir, registry, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}
