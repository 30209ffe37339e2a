/**
 * The real SandboxEngine with every OS touch point replaced by the in-memory fakes (no netns, exec, runc or mounts):
 * what the CRI server sees is the engine's own validation, ordering, unwinding and error mapping. `held()` says what
 * the fakes still hold, for leak checks; `touched()` counts the calls that acquire something.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_ENGINE_OPTIONS } from '../../../electron/engine/common/options';
import { buildPauseSpec } from '../../../electron/engine/runtime/oci-spec';
import type { SandboxEngine } from '../../../electron/engine/service/engine';
import { buildTestEngine } from '../../../testkit/fakes/test-engine';
import { createFakeCni, type FakeCni } from '../../../testkit/fakes/fake-cni';
import { FakeSandboxFiles } from '../../../testkit/fakes/fake-files';
import { fakeLiveReader } from '../../../testkit/fakes/fake-kernel-commands';
import { FakeNetnsManager } from '../../../testkit/fakes/fake-netns';
import { FakePauseRuntime } from '../../../testkit/fakes/fake-runtime';
import { PodscopeError } from '../../../shared/domain/errors';

/**
 * The fake runtime, failing where runc and the kernel fail late: a sysctl runc turns into a /proc/sys path that is
 * not a file (empty segment, trailing dot) or a value with NUL/newline; a hostname sethostname(2) refuses.
 */
class HostLikeRuntime extends FakePauseRuntime {
  override async start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: Parameters<FakePauseRuntime['start']>[3],
  ): ReturnType<FakePauseRuntime['start']> {
    const s = spec as { hostname?: string; linux?: { sysctl?: Record<string, string> } };
    for (const [name, value] of Object.entries(s.linux?.sysctl ?? {})) {
      const path = name.replace(/\./g, '/');
      if (path.split('/').some((seg) => seg === '' || seg === '..') || /[\u0000\n]/.test(path)) {
        throw new PodscopeError('RuntimeError', `runc run failed: open /proc/sys/${path}: no such file or directory`);
      }
      if (value === '' || /[\u0000\n]/.test(value))
        throw new PodscopeError('RuntimeError', `runc run failed: write /proc/sys/${path}: invalid argument`);
    }
    if (Buffer.byteLength(s.hostname ?? '') > 64 || (s.hostname ?? '').includes('\u0000'))
      throw new PodscopeError('RuntimeError', 'runc run failed: sethostname: invalid argument');
    return super.start(id, bundleDir, spec, opts);
  }
}

/** FakeSandboxFiles that also counts prepare calls (the fake itself only tracks what is held). */
class CountingFiles extends FakeSandboxFiles {
  prepares = 0;
  override async prepare(args: Parameters<FakeSandboxFiles['prepare']>[0]) {
    this.prepares++;
    return super.prepare(args);
  }
}

export interface FakeHostEngine {
  engine: SandboxEngine;
  netns: FakeNetnsManager;
  /** the real CNI manager over the fake plugins, which fail where the host's do (spawn refuses a NUL in CNI_ARGS; portmap's net.ParseIP) */
  cni: FakeCni;
  runtime: FakePauseRuntime;
  files: CountingFiles;
  /** what the fakes hold right now */
  held(): { netns: number; containers: number; files: number; shm: number; cniCache: number };
  /** calls that acquire something on a host: netns create, CNI setup, runc start, sandbox files prepare */
  acquisitions(): number;
  dispose(): Promise<void>;
}

export async function createFakeHostEngine(prefix = 'podscope-r3-fakehost-'): Promise<FakeHostEngine> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const netns = new FakeNetnsManager();
  const cni = await createFakeCni({ dir });
  const runtime = new HostLikeRuntime();
  const files = new CountingFiles();
  const engine = buildTestEngine({
    options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state'), runDir: join(dir, 'run') },
    netns,
    cni,
    runtime,
    files,
    liveReader: fakeLiveReader(),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => [...runtime.containers.values()].some((c) => c.pid === pid && c.status === 'running'),
  });
  await engine.start();
  return {
    engine,
    netns,
    cni,
    runtime,
    files,
    held: () => ({
      netns: netns.pinned.size,
      containers: runtime.containers.size,
      files: files.prepared.size,
      shm: files.shmMounted.size,
      cniCache: cni.cache.size,
    }),
    acquisitions: () =>
      netns.calls.filter((c) => c.op === 'create').length +
      cni.calls.filter((c) => c.op === 'setup').length +
      runtime.calls.filter((c) => c.op === 'start').length +
      files.prepares,
    async dispose() {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
