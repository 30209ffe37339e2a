/**
 * The runtime handlers (runc, crun) and the containers suite on each (helpers/handler-containers-suite.ts: every
 * container under conmon), plus what a missing runtime or conmon is told. Needs root, runc, crun and conmon.
 * Bridges and subnets from the test kit's allocator (leases), temp dirs /tmp/prt1-*. Everything is removed in afterAll.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LocalImageStore } from '../../electron/engine/images';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { ContainerConfigInput } from '../../shared/domain/container';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { hasCode } from '../../shared/domain/errors';
import { buildBusyboxImage, writeDockerSave } from '../../testkit/busybox-image';
import { BUSYBOX_IMAGE, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { processesMentioning } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { describeContainersOnHandler } from './helpers/handler-containers-suite';

let env: RealEnv;
let engine: SandboxEngine;
let logDir: string;
let treeDir: string;
let images: LocalBusyboxStore;

beforeAll(async () => {
  env = await createRealEnv({ tag: 'prt1', tempPrefix: 'prt1-env-' });
  treeDir = await mkdtemp(join(tmpdir(), 'prt1-tree-'));
  await buildBusyboxTree(join(treeDir, 'busybox'));
  logDir = await mkdtemp(join(tmpdir(), 'prt1-logs-'));
  images = new LocalBusyboxStore(join(treeDir, 'busybox'));
  engine = await env.engine({}, { images });
});

afterAll(async () => {
  const t0 = Date.now();
  let left = processesMentioning([env.dir]);
  try {
    await env?.teardown();
    // every conmon and session process is gone once the pods are removed
    while (left.length > 0 && Date.now() - t0 < 5000) {
      await new Promise((r) => setTimeout(r, 50));
      left = processesMentioning([env.dir]);
    }
    for (const p of left) process.kill(p.pid, 'SIGKILL');
  } finally {
    if (treeDir) await rm(treeDir, { recursive: true, force: true });
    if (logDir) await rm(logDir, { recursive: true, force: true });
  }
  expect(left).toEqual([]);
});

function pod(name: string): PodSandboxConfigInput {
  return {
    metadata: { name, namespace: 'podscope-prt1', uid: `uid-${name}` },
    hostname: name,
    log_directory: join(logDir, name),
    linux: { security_context: { seccomp: { profile_type: 0 } } },
  };
}

function container(name: string, command: string[], extra: Partial<ContainerConfigInput> = {}): ContainerConfigInput {
  return {
    metadata: { name },
    image: { image: BUSYBOX_IMAGE },
    command,
    log_path: `${name}/0.log`,
    linux: { security_context: { seccomp: { profile_type: 0 } } },
    ...extra,
  };
}

it('an unknown runtime_handler is InvalidArgument naming the field and the handlers there are; nothing is acquired', async () => {
  const err = await engine.run({ config: pod('kata'), runtimeHandler: 'kata' }).catch((e: unknown) => e);
  expect(hasCode(err, 'InvalidArgument')).toBe(true);
  expect((err as Error).message).toMatch(/no runtime for "kata" is configured \(runtime_handler: known handlers are runc, crun/);
  expect(await engine.list()).toEqual([]);
});

it('info lists both handlers with the version each binary prints, runc the default', async () => {
  const info = await engine.info();
  const byName = Object.fromEntries((info.runtimeHandlers ?? []).map((h) => [h.name, h]));
  expect(byName.runc).toMatchObject({ present: true, default: true });
  expect(byName.runc!.version).toMatch(/^runc version \d/);
  expect(byName.crun).toMatchObject({ present: true, default: false });
  expect(byName.crun!.version).toMatch(/^crun version \d/);
});

it('a handler whose binary is missing: the pod is refused naming the package to install, and info says the same', async () => {
  const broken = await env.engine({ crunPath: join(env.dir, 'no-such-crun') }, { images, noLock: true, readOnly: true });
  try {
    const crun = (await broken.info()).runtimeHandlers?.find((h) => h.name === 'crun');
    expect(crun).toMatchObject({ present: false, problem: expect.stringMatching(/install crun \(Debian package crun\)/) });
  } finally {
    await broken.close();
  }
  // a writable engine on its own dirs refuses before acquiring anything
  const other = await createRealEnv({ tag: 'prt1b', tempPrefix: 'prt1b-env-' });
  try {
    const e = await other.engine({ crunPath: join(other.dir, 'no-such-crun') }, { images });
    const err = await e.run({ config: pod('nocrun'), runtimeHandler: 'crun' }).catch((x: unknown) => x);
    expect(hasCode(err, 'FailedPrecondition')).toBe(true);
    expect((err as Error).message).toMatch(/runtime_handler "crun": .*install crun \(Debian package crun\)/);
    expect(await e.list()).toEqual([]);
  } finally {
    await other.teardown();
  }
});

// The pause runs under conmon too, so without it no pod starts; a container of a pod made while it was there cannot.
it('a missing conmon: RunPodSandbox and StartContainer are refused naming the package to install, leaving no pod behind', async () => {
  const { id: podId } = await engine.run({ config: pod('withconmon') });
  const broken = await env.engine({ conmonPath: join(env.dir, 'no-such-conmon') }, { images, noLock: true });
  try {
    const run = await broken.run({ config: pod('noconmon') }).catch((e: unknown) => e);
    expect(hasCode(run, 'FailedPrecondition')).toBe(true);
    expect((run as Error).message).toMatch(/install conmon \(Debian package conmon\)/);
    expect((await broken.list()).filter((s) => s.metadata.name === 'noconmon')).toEqual([]);
    const { id } = await broken.createContainer({ podSandboxId: podId, config: container('c', ['sleep', '100000']) });
    const err = await broken.startContainer(id).catch((e: unknown) => e);
    expect(hasCode(err, 'FailedPrecondition')).toBe(true);
    expect((err as Error).message).toMatch(/install conmon \(Debian package conmon\)/);
    await broken.removeContainer(id);
  } finally {
    await broken.close();
  }
  await engine.remove(podId);
});

for (const handler of ['runc', 'crun'] as const)
  describeContainersOnHandler(handler, {
    engine: () => engine,
    restartEngine: async () => {
      await engine.close();
      engine = await env.engine({}, { images });
    },
    runDir: () => env.options.runDir!,
    pod,
    container,
  });

it('an image from the real store runs on either handler: the runtime sees the overlay rootfs and the pod shm the engine mounted just before', async () => {
  // the suite above runs on a plain directory tree; this one goes through the store's overlay mount, made in the
  // engine's mount namespace right before the create, as a pulled image's is (crun on a hybrid host creates in a
  // namespace of its own, which has to see it)
  const store = await LocalImageStore.open({ root: join(treeDir, 'store', 'images'), runner: new NodeProcessRunner() });
  const tar = join(treeDir, 'busybox-save.tar');
  writeDockerSave(tar, [{ image: buildBusyboxImage(), repoTags: ['podscope.test/busybox:store'] }]);
  await store.load(tar);
  const withStore = await env.engine({}, { images: store, noLock: true });
  try {
    for (const handler of ['crun', 'runc'] as const) {
      const { id: podId } = await withStore.run({ config: pod(`store-${handler}`), runtimeHandler: handler });
      try {
        const { id } = await withStore.createContainer({
          podSandboxId: podId,
          config: {
            ...container(`store-${handler}`, ['sh', '-c', 'stat -f -c "%T $(grep " /dev/shm " /proc/mounts | cut -d" " -f4)" /dev/shm']),
            image: { image: 'podscope.test/busybox:store' },
          },
        });
        await withStore.startContainer(id);
        let st = await withStore.containerStatus(id);
        for (let i = 0; i < 200 && st.state !== 'CONTAINER_EXITED'; i++) {
          await new Promise((r) => setTimeout(r, 25));
          st = await withStore.containerStatus(id);
        }
        expect(st, handler).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0 });
        // the pod's own 64 MiB shm tmpfs, not the empty directory under it
        expect(readFileSync(st.logPath, 'utf8'), handler).toMatch(/ stdout F tmpfs .*size=65536k/);
      } finally {
        await withStore.remove(podId);
      }
    }
  } finally {
    await withStore.close();
  }
});
