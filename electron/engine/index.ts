/**
 * Builds a real engine: Linux netns, libcni-style CNI over the configured dirs, the pod's runtime (runc, crun) under
 * conmon for its pause container and its app containers.
 * Never imports electron: the same engine serves the desktop window, browser mode, the CLI and the CRI socket.
 */
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { createCniManager } from './cni/cni-manager';
import { HostCgroupReader } from './runtime/cgroups';
import { conmonRuntimeAt, ociContainerRuntimes } from './runtime/handler-runtimes';
import { LocalImageStore } from './images/store';
import { SpawnHelperRunner } from './os/spawn-helper';
import { NodeProcessRunner } from './os/exec';
import type { ImageStore } from './images/types';
import { liveNetworkUses, recordedAddOf } from './lab/engine-links';
import { LinuxKernelReader } from './kernel/linux-reader';
import { placedKernelReader } from './kernel/types';
import { KernelLabSnapshotReader } from './lab/kernel';
import { LabService, type LabRecoveryItem } from './lab/service';
import type { RuntimeHandlerInfo, StartupGcItem } from '../../shared/domain/sandbox';
import { LinuxNetnsManager } from './netns/linux-netns';
import { KernelLiveReader } from './netns/live-reader';
import { LinuxProbeNet } from './netns/linux-probe-net';
import { isProcessAlive, processExists } from './common/proc';
import { LinuxFlowTracer } from './trace/flow-tracer';
import { ProcessThroughputMeter } from './throughput/process-meter';
import { KernelTopologyReader } from './topology/reader';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from './common/options';
import { type Engine } from './service/engine-api';
import type { ProcessRunner } from './os/exec';
import { buildPauseSpec } from './runtime/oci-spec';
import { readEngineOomScoreAdj } from './runtime/oom-score';
import { probeRuntimeHandlers } from './runtime/oci-runtime';
import { OciPauseRuntime } from './runtime/pause-runtime';
import { hostSandboxFiles } from './pods/host-files';
import { defaultHostFiles } from './runtime/sandbox-files';
import { SandboxEngine } from './service/engine';
import { StateDirLock } from './service/state-lock';
import { createForeignMeasurer, type ForeignMeasurements, type ForeignSource } from './service/foreign-measurer';
import { nodeFiles } from './foreign/node-files';
import type { ForeignNode } from './foreign/deps';
import { createNodesMeasurer, type NodesMeasurements } from './service/nodes-measurer';

export type { EngineOptions } from './common/options';
export type { Engine } from './service/engine-api';
export { DEFAULT_ENGINE_OPTIONS } from './common/options';

export interface CreateEngineExtras {
  runner?: ProcessRunner;
  /** skip the state-dir and run-dir locks (tests that deliberately open one dir twice) */
  noLock?: boolean;
  /**
   * Look only (CLI `pods`, `inspectp`): takes no lock, so it works beside a daemon on the same dirs, and changes
   * nothing on the host: start-up reconciles in memory, collects no garbage, and run/stop/remove are refused.
   */
  readOnly?: boolean;
  /**
   * Skip the host check (each runtime handler's `--version`, the CNI bin dirs): a verb that only lists what the state
   * dir holds (CLI `pods`) shows neither, and the handlers' version runs were about a third of its start-up. The
   * engine then reports no runtime handlers and none of those problems; refused unless readOnly, since running a pod
   * needs to know its handler is there.
   */
  skipHostCheck?: boolean;
  /** where start-up reports what it collected (default: stderr) */
  log?: (line: string) => void;
  /** an image store instead of the one under <stateDir>/images (tests) */
  images?: ImageStore;
}

/**
 * The spawn helper of this process's engines, shared: the app and the daemons open one engine, but a process that
 * opens several (a test worker, the app reopening on other dirs) started a helper for each, a fork of a large process
 * and a Node start every time. Engines never close their runner; a helper that died is replaced for the next engine.
 */
let processRunner: SpawnHelperRunner | undefined;
function sharedSpawnHelper(): SpawnHelperRunner {
  if (!processRunner?.usable) processRunner = new SpawnHelperRunner();
  return processRunner;
}

export async function createEngine(partial: Partial<EngineOptions> = {}, extras: CreateEngineExtras = {}): Promise<SandboxEngine & Engine> {
  const options: EngineOptions = { ...DEFAULT_ENGINE_OPTIONS, ...partial };
  // children are forked by a small helper: a fork from the engine blocks its event loop for a time that grows with
  // the engine's memory (os/spawn-helper.ts)
  const runner = extras.runner ?? sharedSpawnHelper();
  const readOnly = extras.readOnly ?? false;
  if (extras.skipHostCheck && !readOnly) throw new Error('skipHostCheck is for a read-only engine');
  const { problems, runtimeHandlers } = extras.skipHostCheck
    ? { problems: [], runtimeHandlers: undefined }
    : await checkHost(options, runner);
  const lock = extras.noLock || readOnly ? undefined : await StateDirLock.acquireBoth(options.stateDir, options.runDir);
  try {
    const images: ImageStore & { problems?: string[] } =
      extras.images ??
      (await LocalImageStore.open({
        root: join(options.stateDir, 'images'),
        runner,
        insecureRegistries: options.insecureRegistries,
        registryMirrors: options.registryMirrors,
        readOnly,
      }));
    const kernel = new LinuxKernelReader(runner);
    const engine = new SandboxEngine({
      options,
      netns: new LinuxNetnsManager(options.netnsDir, runner, { readOnly }),
      cni: createCniManager({
        confDir: options.cniConfDir,
        binDirs: options.cniBinDirs,
        cacheDir: options.cniCacheDir,
        maxConfNum: options.maxConfNum,
        runner,
        defaultPluginTimeoutMs: options.pluginTimeoutMs,
        maxNetfilterPluginExecs: options.maxNetfilterPluginExecs,
      }),
      // each pod's pause on its handler's runtime, the same implementation as its app containers, on a root of its own
      runtime: new OciPauseRuntime({
        runDir: options.runDir,
        runtimeAt: conmonRuntimeAt(options, runner),
        rootfsDir: join(options.stateDir, 'pause', 'rootfs'),
      }),
      files: hostSandboxFiles(runner, { ...defaultHostFiles(), resolvConfPath: options.resolvConf }),
      liveReader: new KernelLiveReader(kernel),
      probeNet: new LinuxProbeNet(runner, undefined, kernel),
      flowTracer: new LinuxFlowTracer(runner, kernel),
      processAlive: isProcessAlive,
      processExists,
      images,
      throughputMeter: new ProcessThroughputMeter(),
      topologyReader: new KernelTopologyReader(kernel),
      buildPauseSpec,
      engineOomScoreAdj: await readEngineOomScoreAdj(),
      cleanupTimeoutMs: 60_000,
      lock,
      problems: [...problems, ...(images.problems ?? [])],
      runtimeHandlers,
      readOnly,
      log: extras.log ?? ((line) => process.stderr.write(`podscope engine (pid ${process.pid}): ${line}\n`)),
      containers: {
        ...ociContainerRuntimes(options, runner),
        cgroups: new HostCgroupReader(),
      },
    });
    await engine.start();
    // The lab's namespaces are its own (podscope-lab-*, outside the engine's owned cni-* names), and it always may
    // create them: `podscope lab run` beside a daemon uses a read-only engine only for the live-pod check.
    const lab = new LabService({
      options,
      runner,
      netns: new LinuxNetnsManager(options.netnsDir, runner),
      kernel: new KernelLabSnapshotReader(kernel),
      liveNetworks: () => liveNetworkUses(engine),
      recordedAdd: (id) => recordedAddOf(engine, id),
      probeNet: new LinuxProbeNet(runner, undefined, kernel),
    });
    engine.lab = lab;
    engine.measureForeign = (source, o = {}) => createForeignMeasurerOnNode(source, { ...o, runner });
    engine.measureNodes = (nodes) => createNodesMeasurerOnHost(nodes, { runner });
    // a read-only engine (the CLI beside a daemon) changes nothing: the daemon's own start-up collects
    if (!readOnly) {
      const recovered = await lab.recoverInterrupted().catch((e: unknown) => [
        {
          runId: '',
          netns: join(options.stateDir, 'lab', 'inflight'),
          action: 'read the lab in-flight records',
          error: (e as Error).message,
        },
      ]);
      engine.noteStartupGc(labStartupGc(recovered));
    }
    return engine;
  } catch (e) {
    await lock?.release();
    throw e;
  }
}

/**
 * The measuring verbs on a CRI endpoint's pods (containerd, CRI-O), with the real touch points: the same probe
 * sockets, tracer, kernel readers and throughput meter the engine uses, and read-only reads of the node's files. No
 * state dir, no lock, no engine: nothing of Podscope's own is opened, and nothing of the runtime's is written.
 */
export function createForeignMeasurerOnNode(
  source: ForeignSource,
  opts: { cniCacheDir?: string; runner?: ProcessRunner; node?: ForeignNode } = {},
): ForeignMeasurements {
  // in-process unless given one: a one-shot CLI verb's heap is small, and the app passes its engine's runner
  const runner = opts.runner ?? new NodeProcessRunner();
  const node = opts.node;
  // a kind node's host side (its pods' veths, its bridge, routes, netfilter, tc) is in the node's netns
  const kernel = placedKernelReader(new LinuxKernelReader(runner), node?.netnsPath);
  const place =
    node?.netnsPath !== undefined ? { netnsPath: node.netnsPath, addresses: ['127.0.0.1', '::1', ...node.addresses] } : undefined;
  return createForeignMeasurer(
    {
      files: nodeFiles,
      cniCacheDir: opts.cniCacheDir ?? DEFAULT_ENGINE_OPTIONS.cniCacheDir,
      liveReader: new KernelLiveReader(kernel),
      probeNet: new LinuxProbeNet(runner, undefined, kernel, place),
      flowTracer: new LinuxFlowTracer(runner, kernel),
      throughputMeter: new ProcessThroughputMeter(),
      topologyReader: new KernelTopologyReader(kernel),
      cniPlugins: { runner, binDirs: DEFAULT_ENGINE_OPTIONS.cniBinDirs, timeoutMs: DEFAULT_ENGINE_OPTIONS.pluginTimeoutMs },
      ...(node && { node }),
    },
    source,
  );
}

/**
 * The measuring verbs across several nodes of this machine: a foreign measurer per node (placed in its namespaces)
 * for its own pods, and one probe net and tracer placed on no node for the paths between them.
 */
export function createNodesMeasurerOnHost(
  nodes: Array<{ source: ForeignSource; node: ForeignNode; cniCacheDir?: string }>,
  opts: { runner?: ProcessRunner } = {},
): NodesMeasurements {
  const runner = opts.runner ?? new NodeProcessRunner();
  const kernel = new LinuxKernelReader(runner);
  const members = nodes.map((n) => ({
    node: n.node,
    measurer: createForeignMeasurerOnNode(n.source, {
      runner,
      node: n.node,
      ...(n.cniCacheDir !== undefined && { cniCacheDir: n.cniCacheDir }),
    }),
  }));
  return createNodesMeasurer(
    { probeNet: new LinuxProbeNet(runner, undefined, kernel), flowTracer: new LinuxFlowTracer(runner, kernel) },
    members,
  );
}

/** What keeps the engine from working here; the app shows these instead of failing to open. */
async function checkHost(
  options: EngineOptions,
  runner: ProcessRunner,
): Promise<{ problems: string[]; runtimeHandlers: RuntimeHandlerInfo[] }> {
  const problems: string[] = [];
  const handlers = probeRuntimeHandlers(options, runner);
  if (process.getuid?.() !== 0)
    problems.push(
      'runtime: not running as root: creating network namespaces, running CNI plugins and runc need root (or CAP_SYS_ADMIN + CAP_NET_ADMIN)',
    );
  // the default handler is needed for every pod that names none (its pause and containers run on it); another one only
  // for pods that name it
  const runtimeHandlers = await handlers;
  for (const h of runtimeHandlers) if (h.default && h.problem) problems.push(`runtime: ${h.problem}`);
  const binDirs = await Promise.all(
    options.cniBinDirs.map((d) =>
      access(d, constants.R_OK).then(
        () => true,
        () => false,
      ),
    ),
  );
  if (!binDirs.some(Boolean))
    problems.push(`CNI: none of the plugin dirs exists: ${options.cniBinDirs.join(', ')} (install containernetworking-plugins)`);
  return { problems, runtimeHandlers };
}

/** The lab's interrupted runs as start-up GC items (kind netns: the CRI peers' schema knows no other kinds). */
function labStartupGc(items: LabRecoveryItem[]): StartupGcItem[] {
  const at = new Date().toISOString();
  return items.map((i) => ({
    kind: 'netns',
    path: i.netns,
    ...(i.runId ? { id: i.runId } : {}),
    action: i.runId ? `lab run ${i.runId} interrupted: ${i.action}` : i.action,
    ...(i.error ? { error: i.error } : {}),
    at,
  }));
}
