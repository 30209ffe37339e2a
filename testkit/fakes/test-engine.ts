/**
 * The real SandboxEngine over the OS touch-point fakes, for every test above the OS boundary (UI, IPC, CRI): name
 * reservation, ids, IP selection, trace labels, events and the CNI manager (conf dir, plugin chaining, cache, CHECK,
 * DEL) and the live view's kernel reader are the engine's own; only netns, the CNI plugins' execs, runc, the
 * per-sandbox files and the `ip`/`tc`/`iptables-save` execs are simulated. The image store is the real one under
 * <stateDir>/images over the overlay fakes (fake-overlay.ts: marks any user can write, a copying mount); images get
 * in through its own load (`loadImage`) or a pull from a test registry on 127.0.0.1 (`registry`, `serveImage`).
 * The fakes are returned so tests can inject failures (cni.failures, runtime.stopError, netns.createError,
 * mounter.mountError, edits of `kernel`, …) and look at host-side effects. State and run dirs are a fresh temp dir,
 * removed by close(). For tests only: product code never imports this.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContainerEvent } from '../../shared/domain/container';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from '../../electron/engine/common/options';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import { LinuxKernelReader } from '../../electron/engine/kernel/linux-reader';
import { KernelTopologyReader } from '../../electron/engine/topology/reader';
import type { RecoveryReport } from '../../electron/engine/pods/recover';
import { SandboxEngine, type EngineDeps } from '../../electron/engine/service/engine';
import { createFakeCni, type FakeCni, type FakeNetwork } from './fake-cni';
import { FakeCgroups, FakeContainerHost, FakeContainerRuntime } from './fake-container-runtime';
import { LocalImageStore } from '../../electron/engine/images/store';
import type { ImageRecord } from '../../electron/engine/images/types';
import { parseReference } from '../../electron/engine/images/reference';
import type { BuiltImage } from '../busybox-image';
import { startTestRegistry, type TestRegistry } from '../registry';
import { buildTestImage, loadTestImage, type TestImageSpec } from '../test-images';
import { CopyingRootfsMounter, FakeOverlayMarks, noProcessRunner } from './fake-overlay';
import { FakeSandboxFiles } from './fake-files';
import type { FakeKernel } from './fake-kernel';
import { FakeKernelCommands, fakeLiveReader } from './fake-kernel-commands';
import { FakeNetnsManager } from './fake-netns';
import { FakeProbeNet, type FakeProbeWorld } from './fake-probe-net';
import { FakePauseRuntime } from './fake-runtime';
import { FakeThroughputMeter } from './fake-throughput';

/** the registry name whose images a test engine with `registry` pulls from its test registry */
const TEST_REGISTRY = 'podscope.test';

export interface TestEngineOptions {
  /** engine options over the temp-dir defaults (dirs you pass are used as given) */
  options?: Partial<EngineOptions>;
  /** the conf dir's networks, written as conflists (default FAKE_NETWORKS: loopback + bridge/portmap/bandwidth) */
  networks?: FakeNetwork[];
  /** engine set-up problems shown by info() and runtimeConditions() (e.g. "runtime: runc not found") */
  problems?: string[];
  /** another image store (e.g. one over the host's overlayfs) instead of the real store over the overlay fakes */
  imageStore?: LocalImageStore;
  /**
   * start a test registry (testkit/registry.ts) on 127.0.0.1 that the store pulls `podscope.test/…` from (as its
   * mirror for that registry); `serveImage` puts images there
   */
  registry?: boolean;
  /** temp dir name prefix (default "podscope-test-engine-") */
  tmpPrefix?: string;
  /**
   * Gives the engine the cheap existence check (EngineDeps.processExists) beside processAlive, each calling its hook
   * first: a bench puts there what the check costs on a real host (a /proc read, a kill(0)).
   */
  livenessHooks?: { alive(): void; exists(): void };
}

export interface TestEngine {
  engine: SandboxEngine;
  netns: FakeNetnsManager;
  /** the real CNI manager over the fake plugins (`cni.plugins`, whose `kernel` is what they set up) */
  cni: FakeCni;
  runtime: FakePauseRuntime;
  files: FakeSandboxFiles;
  /** the kernel as the fake plugins left it; the real live reader reads it through `ip`/`tc`/`iptables-save` output */
  kernel: FakeKernel;
  /** the reachability probe's simulated network (listeners, black holes, agents left open) */
  probe: FakeProbeNet;
  /** the real image store the engine uses (under <stateDir>/images unless `imageStore` was given) */
  images: LocalImageStore;
  /** its rootfs "mounts": `mounted` lists what is not yet unmounted, `mountError` fails the next one (unused with `imageStore`) */
  mounter: CopyingRootfsMounter;
  /** builds (once per test file) and loads a small image tagged `ref` through the store's own load */
  loadImage(ref: string, spec?: TestImageSpec): Promise<ImageRecord>;
  /** the containers the store counts as users of an image (its users/ dir): what makes remove refuse */
  imageUsers(): Promise<string[]>;
  /** with `registry`: the test registry the store pulls `podscope.test/…` from */
  registry: TestRegistry | undefined;
  /** with `registry`: builds (once per test file) a small image and serves it as `ref` (`podscope.test/<name>:<tag>`) */
  serveImage(ref: string, spec?: TestImageSpec): BuiltImage;
  /** replays byte curves for throughput(); set `curves` per direction */
  throughput: FakeThroughputMeter;
  /** the `ip`/`bridge`/`tc` commands over what the fake CNI plugins left; the engine's own kernel and topology readers run over them */
  kernelCommands: FakeKernelCommands;
  containerRuntime: FakeContainerRuntime;
  cgroups: FakeCgroups;
  host: FakeContainerHost;
  /** every event the engine emitted since it was built */
  events: (SandboxEvent | ContainerEvent)[];
  recovery: RecoveryReport;
  /** the temp dir holding state, run, netns and CNI dirs */
  dir: string;
  /** closes the engine and removes the temp dir; idempotent */
  close(): Promise<void>;
}

/**
 * What a test brings to build the engine by hand (its own netns, CNI, pause runtime or files fakes, often failing on
 * purpose); every touch point it leaves out is a fake, never the host's: containers run on FakeContainerRuntime, the
 * live view reads an empty fake kernel, a pid is alive as the pause runtime says.
 */
export type TestEngineParts = Pick<EngineDeps, 'options' | 'netns' | 'cni' | 'runtime' | 'files'> & Partial<EngineDeps>;

/**
 * The one place tests build a SandboxEngine (lint refuses `new SandboxEngine(` in tests/, e2e/ and bench/): not
 * started, so a test can look at start() itself. createTestEngine builds on it.
 */
export function buildTestEngine(parts: TestEngineParts): SandboxEngine {
  const { runtime } = parts;
  return new SandboxEngine({
    liveReader: fakeLiveReader(),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => (runtime instanceof FakePauseRuntime ? runtime.processAlive(pid) : false),
    containers: { runtime: new FakeContainerRuntime(), cgroups: new FakeCgroups(), host: new FakeContainerHost() },
    ...parts,
  });
}

export async function createTestEngine(opts: TestEngineOptions = {}): Promise<TestEngine> {
  const dir = await mkdtemp(join(tmpdir(), opts.tmpPrefix ?? 'podscope-test-engine-'));
  const options: EngineOptions = {
    ...DEFAULT_ENGINE_OPTIONS,
    stateDir: join(dir, 'state'),
    runDir: join(dir, 'run'),
    netnsDir: join(dir, 'netns'),
    cniConfDir: join(dir, 'net.d'),
    cniCacheDir: join(dir, 'cni-cache'),
    ...opts.options,
  };
  const netns = new FakeNetnsManager(options.netnsDir);
  const cni = await createFakeCni({
    dir,
    networks: opts.networks,
    confDir: options.cniConfDir,
    cacheDir: options.cniCacheDir,
    maxConfNum: options.maxConfNum,
    defaultPluginTimeoutMs: options.pluginTimeoutMs,
  });
  const kernel = cni.plugins.kernel;
  // its roots under the engine's run dir, as the real one's: a record from before names `<runDir>/runc`
  const runtime = new FakePauseRuntime(undefined, options.runDir);
  const files = new FakeSandboxFiles();
  const registry = opts.registry ? await startTestRegistry() : undefined;
  const mounter = new CopyingRootfsMounter();
  const images =
    opts.imageStore ??
    (await LocalImageStore.open({
      root: join(options.stateDir, 'images'),
      runner: noProcessRunner,
      registryMirrors: registry && { [TEST_REGISTRY]: `http://${registry.host}` },
      marks: new FakeOverlayMarks(),
      mounter,
    }));
  const probe = new FakeProbeNet(() => fakeProbeWorld(kernel));
  // default: 8 Gbit/s line speed through containerd's 512 MiB burst, then 10 Mbit/s
  const throughput = new FakeThroughputMeter({
    ingress: { lineBytesPerMs: 1e6, burstBytes: 536_870_911, shapedBytesPerMs: 1250 },
    egress: { lineBytesPerMs: 1e6, burstBytes: 536_870_911, shapedBytesPerMs: 1250 },
  });
  const kernelCommands = new FakeKernelCommands(kernel);
  const containerRuntime = new FakeContainerRuntime();
  const cgroups = new FakeCgroups();
  const host = new FakeContainerHost();
  const deps: EngineDeps = {
    options,
    netns,
    cni,
    runtime,
    files,
    liveReader: fakeLiveReader(kernel, kernelCommands),
    probeNet: probe,
    images,
    throughputMeter: throughput,
    topologyReader: new KernelTopologyReader(new LinuxKernelReader(kernelCommands)),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => {
      opts.livenessHooks?.alive();
      return containerRuntime.alive(pid) || (await runtime.processAlive(pid));
    },
    ...(opts.livenessHooks && {
      processExists: (pid: number) => {
        opts.livenessHooks!.exists();
        return containerRuntime.alive(pid) || runtime.exists(pid);
      },
    }),
    containers: { runtime: containerRuntime, cgroups, host },
    problems: opts.problems,
  };
  const engine = buildTestEngine(deps);
  const events: (SandboxEvent | ContainerEvent)[] = [];
  engine.subscribe((e) => events.push(e));
  let recovery: RecoveryReport;
  try {
    recovery = await engine.start();
  } catch (e) {
    await engine.close().catch(() => undefined);
    await registry?.close();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  let closed = false;
  return {
    engine,
    netns,
    cni,
    runtime,
    files,
    kernel,
    probe,
    images,
    mounter,
    loadImage: (ref, spec) => loadTestImage(images, ref, spec),
    imageUsers: async () =>
      (await readdir(join(images.root, 'users')).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)),
    registry,
    serveImage(ref, spec) {
      const parsed = parseReference(ref);
      if (!registry || parsed.registry !== TEST_REGISTRY || !parsed.tag)
        throw new Error(`serveImage ${ref}: needs createTestEngine({ registry: true }) and a ${TEST_REGISTRY}/<name>:<tag> ref`);
      const image = buildTestImage(parsed.canonical, spec);
      registry.putImage(parsed.repository, parsed.tag, image);
      return image;
    },
    throughput,
    kernelCommands,
    containerRuntime,
    cgroups,
    host,
    events,
    recovery,
    dir,
    async close() {
      if (closed) return;
      closed = true;
      await engine.close();
      await registry?.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Where the fake CNI plugins put every address (pod IPs in their netns, gateways on the host) and portmap's rules. */
export function fakeProbeWorld(kernel: FakeKernel): FakeProbeWorld {
  return { addresses: kernel.addressOwners(), nat: structuredClone(kernel.nat) };
}
