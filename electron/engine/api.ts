/**
 * The engine's public surface: the one module the front doors (cli, cri, ipc, endpoints, core, host, main) import
 * from electron/engine (eslint.config.js enforces it). What a door needs is named here, so the engine's folders can
 * be split or moved without touching a door, and a door cannot reach past the engine's verbs into its internals.
 *
 * `createEngine` is loaded on first call: the CLI's look-only verbs and `--endpoint` runs never load the engine's
 * OS code at all, and a door that only needs a type or a small helper stays light.
 */
import type { createEngine as buildEngine, CreateEngineExtras } from './index';
import type { ImageStore } from './images/types';
import type { EngineOptions } from './common/options';
import type { ForeignMeasurements, ForeignSource } from './service/foreign-measurer';
import type { NodesMeasurements } from './service/nodes-measurer';

export type { EngineOptions } from './common/options';
export type { Engine } from './service/engine-api';
export { DEFAULT_ENGINE_OPTIONS } from './common/options';
export type { CreateEngineExtras } from './index';
export { createUnavailableEngine } from './service/unavailable';
export type { ForeignSandbox, ForeignPodFacts } from './foreign/resolve';
export type { ForeignNode } from './foreign/deps';
import type { ForeignNode } from './foreign/deps';

/** The in-process engine as createEngine builds it: every verb of the SandboxApi and ContainerApi, lab, images. */
export type LocalEngine = Awaited<ReturnType<typeof buildEngine>>;

/** Builds the real engine (Linux netns, libcni-style CNI, runc); see index.ts. */
export async function createEngine(options: Partial<EngineOptions> = {}, extras: CreateEngineExtras = {}): Promise<LocalEngine> {
  const { createEngine: build } = await import('./index');
  return build(options, extras);
}

/**
 * A runner that spawns from this process, not through the spawn helper: for a one-shot CLI verb whose heap is small,
 * so a fork is cheap, and starting the helper (a second Node process) would cost more than every spawn it saves.
 */
export async function inProcessRunner(): Promise<NonNullable<CreateEngineExtras['runner']>> {
  const { NodeProcessRunner } = await import('./os/exec');
  return new NodeProcessRunner();
}

/** The measuring verbs on a CRI endpoint's pods, made by this process on this node (service/foreign-measurer.ts). */
export type { ForeignMeasurements, ForeignSource } from './service/foreign-measurer';
export async function createForeignMeasurer(
  source: ForeignSource,
  opts: { cniCacheDir?: string; runner?: NonNullable<CreateEngineExtras['runner']>; node?: ForeignNode } = {},
): Promise<ForeignMeasurements> {
  const { createForeignMeasurerOnNode } = await import('./index');
  return createForeignMeasurerOnNode(source, opts);
}

/** The measuring verbs across several nodes of this machine (service/nodes-measurer.ts). */
export type { NodesMeasurements } from './service/nodes-measurer';
export async function createNodesMeasurer(
  nodes: Array<{ source: ForeignSource; node: ForeignNode; cniCacheDir?: string }>,
  opts: { runner?: NonNullable<CreateEngineExtras['runner']> } = {},
): Promise<NodesMeasurements> {
  const { createNodesMeasurerOnHost } = await import('./index');
  return createNodesMeasurerOnHost(nodes, opts);
}

// containers: streaming sessions and log files
export type { AttachRequest, ContainerStreaming, ExecStreamRequest, ResizeSource, StreamIO, TerminalSize } from './containers/streaming';
export { openContainerLog, openContainerLogReads, type ContainerLogOptions } from './containers/log-reader';

// images: the store's types and the two views every door shows of a record
export type { ImageRecord, ImageStore, PullProgress, RegistryAuth } from './images/types';
export { imageVerboseInfo, imageViewOf } from './images/verbose-info';
export { parseRegistryMirror } from './images/registry-client';

/**
 * The image store alone, without an engine: it has its own lock (images/store-lock.ts), taken only while a pull, load
 * or remove commits, so the CLI lists, inspects and loads images beside an app, `serve` or `cri` holding the state dir.
 */
export async function openImageStore(options: Partial<EngineOptions> = {}): Promise<ImageStore> {
  const [{ LocalImageStore }, { NodeProcessRunner }, { DEFAULT_ENGINE_OPTIONS: defaults }, { join }] = await Promise.all([
    import('./images/store'),
    import('./os/exec'),
    import('./common/options'),
    import('node:path'),
  ]);
  const o = { ...defaults, ...options };
  return LocalImageStore.open({
    root: join(o.stateDir, 'images'),
    runner: new NodeProcessRunner(),
    insecureRegistries: o.insecureRegistries,
    registryMirrors: o.registryMirrors,
  });
}
