/**
 * The cheap liveness look (two kill(pid, 0): conmon's and the process's, pods/status.ts runsUnderLiveMonitor) must
 * never show a dead pause or container as running: with its conmon SIGKILLed first, the pause or container runs on
 * unwatched and reads still show it running (by the exact /proc look); once it is killed too, the next read shows it
 * gone, though no conmon wrote an exit file. Real runc, conmon and a busybox tree. Bridge and subnets
 * from the test kit's allocator (a lease), temp dirs /tmp/psl-*; everything is removed in afterAll.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { BUSYBOX_IMAGE, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const isRoot = process.getuid?.() === 0;
let env: RealEnv;
let engine: SandboxEngine;
let treeDir: string;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  for (const t0 = Date.now(); Date.now() - t0 < ms;) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!isRoot)('liveness when conmon is gone', () => {
  beforeAll(async () => {
    env = await createRealEnv({ tag: 'psl', tempPrefix: 'psl-env-' });
    treeDir = await mkdtemp(join(tmpdir(), 'psl-tree-'));
    await buildBusyboxTree(join(treeDir, 'busybox'));
    engine = await env.engine({}, { images: new LocalBusyboxStore(join(treeDir, 'busybox')) });
  });

  afterAll(async () => {
    try {
      await env?.teardown();
    } finally {
      if (treeDir) await rm(treeDir, { recursive: true, force: true });
    }
  });

  it('a pause whose conmon was killed reads READY while it runs and NOTREADY once it is killed too', async () => {
    const { id } = await engine.run({ config: { metadata: { name: 'lone-pause', namespace: 'podscope-psl', uid: 'u-lp' } } });
    const { pid, monitorPid } = (await engine.status(id)).pause;
    expect(pid && monitorPid && alive(pid) && alive(monitorPid)).toBeTruthy();
    process.kill(monitorPid!, 'SIGKILL');
    await until('conmon gone', async () => (alive(monitorPid!) ? undefined : true));
    expect((await engine.status(id)).state).toBe('SANDBOX_READY');
    expect((await engine.list()).find((s) => s.id === id)?.state).toBe('SANDBOX_READY');
    process.kill(pid!, 'SIGKILL');
    // no conmon writes an exit file now; the pause may stay a zombie of pid 1 for a while, which counts as gone
    expect(await until('NOTREADY', async () => ((await engine.status(id)).state === 'SANDBOX_NOTREADY' ? true : undefined), 3000)).toBe(
      true,
    );
    expect((await engine.list()).find((s) => s.id === id)?.state).toBe('SANDBOX_NOTREADY');
    await engine.remove(id);
  });

  it('a container whose conmon was killed reads RUNNING while it runs and EXITED (exit unknown) once it is killed too', async () => {
    const { id: podId } = await engine.run({
      config: {
        metadata: { name: 'lone-ctr', namespace: 'podscope-psl', uid: 'u-lc' },
        linux: { security_context: { namespace_options: { network: 2 } } },
      },
    });
    const { id } = await engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'sleeper' }, image: { image: BUSYBOX_IMAGE }, command: ['sleep', '100000'] },
    });
    await engine.startContainer(id);
    const { pid, monitorPid } = await engine.containerStatus(id);
    process.kill(monitorPid!, 'SIGKILL');
    await until('conmon gone', async () => (alive(monitorPid!) ? undefined : true));
    expect((await engine.containerStatus(id)).state).toBe('CONTAINER_RUNNING');
    expect((await engine.listContainers({ podSandboxId: podId })).map((c) => c.state)).toEqual(['CONTAINER_RUNNING']);
    process.kill(pid!, 'SIGKILL');
    const st = await until('EXITED', async () => {
      const s = await engine.containerStatus(id);
      return s.state === 'CONTAINER_EXITED' ? s : undefined;
    });
    expect(st.reason).toBe('Unknown');
    expect((await engine.listContainers({ podSandboxId: podId })).map((c) => c.state)).toEqual(['CONTAINER_EXITED']);
    await engine.remove(podId);
  });
});
