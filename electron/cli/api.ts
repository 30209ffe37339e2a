/**
 * Gives a command what it needs from where it runs: a CRI endpoint when --endpoint is set, else an engine in this
 * process. What only one of them has (streaming) is declared by each side's type, never probed; a command that needs
 * a part the endpoint lacks refuses with the one NotSupportedError. The measurements are always this process's: over
 * an endpoint they are made on the pods the runtime describes (engine/service/foreign-measurer.ts), read-only.
 */
import type { ContainerEvent } from '../../shared/domain/container';
import type { EndpointApi } from '../../shared/domain/endpoints';
import { PodscopeError } from '../../shared/domain/errors';
import type { MeasurementApi, SandboxEvent } from '../../shared/domain/sandbox';
import type { ContainerStreaming } from '../engine/api';
import type { CriEndpointApi } from '../cri/client';
import type { EndpointImages } from '../endpoints/images';
import type { LazyForeignMeasurer } from '../endpoints/foreign-measurements';
import { engineOptionsFromFlags, type Flags } from './args';

/** One command's endpoint: the verbs every endpoint serves, plus the parts this one has. */
export interface CliEndpoint {
  api: EndpointApi;
  streaming?: ContainerStreaming;
  /** made by this process: an engine's own, or the foreign-pod measurer over an endpoint's pods */
  measurements?: CliMeasurements;
}

/** The measurements and the events that carry their progress (an in-process engine's). */
export type CliMeasurements = MeasurementApi & { subscribe(listener: (e: SandboxEvent | ContainerEvent) => void): () => void };

export async function withEndpoint<T>(
  flags: Flags,
  fn: (endpoint: CliEndpoint) => Promise<T>,
  access: 'read' | 'write' | 'list' = 'write',
): Promise<T> {
  if (typeof flags.endpoint === 'string') {
    const { createCriEndpointApi } = await import('../cri/client');
    const cri = createCriEndpointApi(flags.endpoint);
    const measurer = await foreignMeasurer(cri, flags);
    // the verbs are the runtime's; the measuring ones are made here, on the pod the runtime describes
    // (the client is a plain object of closures, so a spread keeps every verb)
    const api: EndpointApi = { ...cri, probe: measurer.probe, lastProbe: measurer.lastProbe, live: measurer.live };
    try {
      return await fn({ api, streaming: cri.streaming, measurements: measurer });
    } finally {
      measurer.close();
      cri.close();
    }
  }
  const { createEngine, inProcessRunner } = await import('../engine/api');
  // a one-shot command's engine closes right after the verb: a probe-on-ready would only be started to be canceled.
  // A look-only verb spawns little (the runtimes' --version) from a small heap: in-process, without the spawn helper.
  // 'list' (pods) reads only the state dir: the runtimes' --version runs of the host check are skipped too
  const readOnly = access !== 'write';
  const engine = await createEngine(
    { ...engineOptionsFromFlags(flags), probeOnReady: false },
    { readOnly, ...(readOnly && { runner: await inProcessRunner() }), ...(access === 'list' && { skipHostCheck: true }) },
  );
  try {
    return await fn({ api: engine, ...(engine.streaming && { streaming: engine.streaming }), measurements: engine });
  } finally {
    await engine.close();
  }
}

/**
 * The foreign-pod measurer for an endpoint, built on first use: a verb that measures nothing (pods, ps, images) never
 * loads the engine's OS code. The app's endpoints use the same one (endpoints/foreign-measurements.ts).
 */
async function foreignMeasurer(cri: CriEndpointApi, flags: Flags): Promise<LazyForeignMeasurer> {
  const { lazyForeignMeasurer } = await import('../endpoints/foreign-measurements');
  return lazyForeignMeasurer(async () => {
    const [{ createForeignMeasurer, inProcessRunner }, { openNode, discoverHostNodes }] = await Promise.all([
      import('../engine/api'),
      import('../endpoints/nodes'),
    ]);
    const cacheDir = flags['endpoint-cni-cache'];
    // a runtime in namespaces of its own (a kind node): its pods are found through its root and measured from its netns
    const { source, node } = await openNode(cri, { discover: discoverHostNodes });
    return createForeignMeasurer(source, {
      ...(typeof cacheDir === 'string' && { cniCacheDir: cacheDir }),
      runner: await inProcessRunner(),
      ...(node && { node }),
    });
  });
}

/** A CRI endpoint's foreign-pod measurer alone (the lab's compare with one of its pods), closed after `fn`. */
export async function withForeignMeasurer<T>(flags: Flags, fn: (m: LazyForeignMeasurer) => Promise<T>): Promise<T> {
  if (typeof flags.endpoint !== 'string')
    throw new PodscopeError('InvalidArgument', '--endpoint names the CRI endpoint whose pod is compared');
  const { createCriEndpointApi } = await import('../cri/client');
  const cri = createCriEndpointApi(flags.endpoint);
  const measurer = await foreignMeasurer(cri, flags);
  try {
    return await fn(measurer);
  } finally {
    measurer.close();
    cri.close();
  }
}

/**
 * @param access "read" for verbs that only look (pods, inspectp): the engine is opened read-only, takes no lock and
 * changes nothing on the host, so it is safe beside a daemon on the same (or a shared) run dir; "list" for a verb that
 * reads only what the state dir holds (pods): read-only, and without the host check it never shows.
 */
export function withApi<T>(flags: Flags, fn: (api: EndpointApi) => Promise<T>, access: 'read' | 'write' | 'list' = 'write'): Promise<T> {
  return withEndpoint(flags, ({ api }) => fn(api), access);
}

/** The image commands: the local store (no --endpoint) or any CRI runtime's ImageService, through the one adapter. */
export async function withImages<T>(flags: Flags, fn: (images: EndpointImages) => Promise<T>): Promise<T> {
  const { criImages, localImages } = await import('../endpoints/images');
  if (typeof flags.endpoint === 'string') {
    const { connectCriImages } = await import('../cri/client/cri-image-api');
    const cri = await connectCriImages(flags.endpoint);
    try {
      return await fn(criImages(async () => cri, flags.endpoint));
    } finally {
      cri.close();
    }
  }
  // the image store alone, not an engine: the app, `serve` or `cri` may hold the state dir (see openImageStore)
  const { openImageStore } = await import('../engine/api');
  return fn(localImages(await openImageStore(engineOptionsFromFlags(flags))));
}
