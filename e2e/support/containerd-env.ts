/**
 * A real containerd (Debian's 1.6.20, testkit/containerd-fixture) for the endpoint specs: its own config,
 * dirs, socket, conflist (bridge psc-ctde, 10.240.0.0/24 + fd00:240::/64, portmap, bandwidth, no masquerade) and a
 * locally built pause image. Sandboxes are created in containerd through Podscope's CRI client, never through the UI.
 * `dispose` first drops the UI's endpoints that point at this socket from the host's registry, then removes every
 * sandbox it created (CNI DEL runs, so portmap chains, the bandwidth ifb and the IPAM lease go), then stops the
 * containerd, which removes the netns, the bridge, the iptables chains it added and its temp dir.
 */
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { CriEndpointRegistry } from '../../electron/endpoints';
import { startContainerd, type ContainerdFixture } from '../../testkit/containerd-fixture';
import { holdFileLockInProcess } from '../../electron/engine/os/file-lock';
import { teardownSteps } from './attempts';

export const CTD_BRIDGE = process.env.PODSCOPE_E2E_CTD_BRIDGE ?? 'psc-ctde';
export const CTD_SUBNET = Number(process.env.PODSCOPE_E2E_CTD_SUBNET ?? '240');

export interface ContainerdEnv {
  fixture: ContainerdFixture;
  socketPath: string;
  /** runs a sandbox in containerd (CRI RunPodSandbox) and remembers it for dispose */
  run(config: PodSandboxConfigInput): Promise<string>;
  dispose(): Promise<string[]>;
}

/**
 * One containerd at a time on the host, whichever Playwright worker asks: the fixture tidies containerd's host-wide
 * dirs (/run/containerd, /var/lib/cni) when it stops, which another worker's containerd would still be using.
 */
const CONTAINERD_LOCK = '/run/podscope-e2e-containerd.lock';

export async function startContainerdEnv(endpoints: CriEndpointRegistry): Promise<ContainerdEnv> {
  const lock = await holdFileLockInProcess(CONTAINERD_LOCK, 300);
  if (!lock) throw new Error(`another e2e worker held ${CONTAINERD_LOCK} for 300 s`);
  let fixture: ContainerdFixture;
  try {
    fixture = await startContainerd({ bridge: CTD_BRIDGE, subnet: CTD_SUBNET });
  } catch (e) {
    lock.release();
    throw e;
  }
  const ids: string[] = [];
  let disposed = false;
  return {
    fixture,
    socketPath: fixture.socketPath,
    async run(config) {
      const { id } = await fixture.api.run({ config });
      ids.push(id);
      return id;
    },
    async dispose() {
      if (disposed) return [];
      disposed = true;
      const { attempt, problems } = teardownSteps();
      // the UI's connections to this containerd go first, so nothing polls it while it stops
      await attempt('remove UI endpoints', async () => {
        for (const e of await endpoints.list()) {
          if (e.address === `unix://${fixture.socketPath}`) await endpoints.remove(e.id);
        }
      });
      for (const id of ids) {
        await attempt(`stop sandbox ${id}`, () => fixture.api.stop(id));
        await attempt(`remove sandbox ${id}`, () => fixture.api.remove(id));
      }
      // removes whatever else is left in containerd, kills it by pid, cleans netns/bridge/chains/dirs
      await attempt('stop containerd', () => fixture.stop());
      lock.release();
      return problems;
    },
  };
}
