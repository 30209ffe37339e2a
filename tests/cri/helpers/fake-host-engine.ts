/**
 * The real SandboxEngine with every OS touch point replaced by the in-memory fakes (no netns, exec, runc or mounts):
 * what the CRI server sees is the engine's own validation, ordering, unwinding and error mapping. `held()` says what
 * the fakes still hold, for leak checks; `touched()` counts the calls that acquire something.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_ENGINE_OPTIONS } from '../../../electron/engine/options';
import { buildPauseSpec } from '../../../electron/engine/runtime/oci-spec';
import { SandboxEngine } from '../../../electron/engine/sandbox/service';
import { FakeCniManager } from '../../../electron/engine/testing/fake-cni';
import { FakeSandboxFiles } from '../../../electron/engine/testing/fake-files';
import { FakeLiveReader } from '../../../electron/engine/testing/fake-live';
import { FakeNetnsManager } from '../../../electron/engine/testing/fake-netns';
import { FakePauseRuntime } from '../../../electron/engine/testing/fake-runtime';

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
  cni: FakeCniManager;
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
  const cni = new FakeCniManager();
  const runtime = new FakePauseRuntime();
  const files = new CountingFiles();
  const engine = new SandboxEngine({
    options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state'), runDir: join(dir, 'run') },
    netns, cni, runtime, files, liveReader: new FakeLiveReader(), buildPauseSpec, engineOomScoreAdj: 0, cleanupTimeoutMs: 5000,
    processAlive: async (pid) => [...runtime.containers.values()].some((c) => c.pid === pid && c.status === 'running'),
  });
  await engine.start();
  return {
    engine, netns, cni, runtime, files,
    held: () => ({ netns: netns.pinned.size, containers: runtime.containers.size, files: files.prepared.size, shm: files.shmMounted.size, cniCache: cni.cache.size }),
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
