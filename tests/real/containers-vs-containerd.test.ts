/**
 * CreateContainer+StartContainer next to containerd on the same image: one busybox image built offline, imported
 * into Debian's containerd (ctr import) and loaded into Podscope's own image store (overlay rootfs), both driven
 * over CRI with the same client. Host-network pods on both sides, so only the container path is compared (and no
 * CNI subnet is needed beyond the fixture's own, leased from the test kit's allocator as the env's is). Prints the medians; asserts only that
 * both did the same work.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { LocalImageStore } from '../../electron/engine/images';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { buildBusyboxImage, writeDockerSave } from '../../testkit/busybox-image';
import { startContainerd, type ContainerdFixture } from '../../testkit/containerd-fixture';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const REF = 'podscope.test/busybox:1';
const N = 10;
let dir: string;
let ctd: ContainerdFixture | undefined;
let env: RealEnv;
let server: CriServer;
let podscope: CriEndpointApi;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-c1-vs-'));
  const tar = join(dir, 'busybox.tar');
  writeDockerSave(tar, [{ image: buildBusyboxImage(), repoTags: [REF] }]);
  ctd = await startContainerd({});
  execFileSync('/usr/bin/ctr', ['-a', ctd.socketPath, '-n', 'k8s.io', 'images', 'import', tar], { stdio: ['ignore', 'pipe', 'pipe'] });
  env = await createRealEnv({ tag: 'c1vs' });
  const images = await LocalImageStore.open({ root: join(env.dir, 'state', 'images'), runner: new NodeProcessRunner() });
  await images.load(tar);
  const engine = await env.engine({}, { images });
  server = await startCriServer({ engine, socketPath: join(dir, 'podscope.sock') });
  podscope = createCriEndpointApi(`unix://${server.socketPath}`);
}, 120_000);

afterAll(async () => {
  podscope?.close();
  await server?.close();
  await env?.teardown();
  await ctd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function measure(api: CriEndpointApi, name: string): Promise<number[]> {
  const pod = {
    metadata: { name, namespace: 'default', uid: `${name}-uid` },
    hostname: '',
    linux: { security_context: { namespace_options: { network: 2 } } },
  };
  const { id: podId } = await api.run({ config: pod });
  const times: number[] = [];
  try {
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      const { id } = await api.createContainer({
        podSandboxId: podId,
        config: { metadata: { name: `c${i}` }, image: { image: REF }, command: ['sleep', '100'] },
        sandboxConfig: pod,
      });
      await api.startContainer(id);
      times.push(performance.now() - t0);
      expect((await api.containerStatus(id)).state).toBe('CONTAINER_RUNNING');
      await api.stopContainer(id, 0);
      await api.removeContainer(id);
    }
  } finally {
    await api.stop(podId);
    await api.remove(podId);
  }
  return times.sort((a, b) => a - b);
}

describe('CreateContainer+StartContainer, Podscope next to containerd', () => {
  it(`runs ${N} busybox containers on each and prints the medians`, async () => {
    const mine = await measure(podscope, 'vs-podscope');
    const theirs = await measure(ctd!.api, 'vs-containerd');
    const p50 = (t: number[]) => t[Math.floor(t.length / 2)]!.toFixed(1);
    console.log(
      `CreateContainer+StartContainer p50 over CRI (busybox, overlay rootfs, host-network pod, load ${execFileSync('cat', ['/proc/loadavg']).toString().split(' ')[0]}): podscope ${p50(mine)} ms (min ${mine[0]!.toFixed(1)}), containerd 1.6.20 ${p50(theirs)} ms (min ${theirs[0]!.toFixed(1)})`,
    );
    expect(mine).toHaveLength(N);
    expect(theirs).toHaveLength(N);
  }, 300_000);
});
