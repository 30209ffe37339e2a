/**
 * The endpoints the app can show: "local" (the in-process engine) plus CRI runtime.v1 sockets the user added
 * (containerd, CRI-O, a Podscope daemon). Adding connects first (Version), so a wrong path is an immediate,
 * clear Unavailable error. Capabilities are probed from what the runtime actually answers, never assumed:
 * plugin trace only from Podscope, CNI config only when Status verbose carries it, events only when
 * GetContainerEvents is served, preview never over CRI, containers unless ListContainers answers Unimplemented.
 *
 * This file composes: one entry per added endpoint (cri-entry.ts) with its follower (pod-follower.ts), and the
 * liveness watch (endpoint-watch.ts).
 */
import {
  cniCacheDirOf,
  CniResultsDirSchema,
  DEFAULT_CNI_RESULTS_DIR,
  LOCAL_ENDPOINT_CAPABILITIES,
  LOCAL_ENDPOINT_ID,
  LOCAL_ENDPOINT_LABEL,
  type AddEndpointRequest,
  type EndpointApi,
  type EndpointCapabilities,
  type EndpointDelta,
  type EndpointRegistry,
  type EndpointView,
} from '../../shared/domain/endpoints';
import { PodscopeError, notFound, notSupported } from '../../shared/domain/errors';
import type { LabApi, LabRecordedAdd } from '../../shared/domain/lab';
import type { NodeDiscovery, ProbeMatrix } from '../../shared/domain/nodes';
import type { MeasurementApi, SandboxApi, SandboxEvent } from '../../shared/domain/sandbox';
import { normalizeAddress } from '../cri/address';
import type { CriConnectionOptions } from '../cri/client/connection';
import { createCriEndpointApi, type CriEndpointApi } from '../cri/client/cri-endpoint-api';
import { checkEndpointSocket } from '../cri/client/socket-check';
import { connectCriImages } from '../cri/client/cri-image-api';
import type {
  ContainerStreaming,
  Engine,
  ForeignMeasurements,
  ForeignNode,
  ForeignSource,
  ImageStore,
  NodesMeasurements,
} from '../engine/api';
import { closeEntry, newEndpointView, probeCapabilities, routedApi, type CriEntry, type LazyMeasurer } from './cri-entry';
import { EndpointWatch } from './endpoint-watch';
import { lazyForeignMeasurer } from './foreign-measurements';
import { criImages, localImages, type EndpointImages } from './images';
import { discoverHostNodes, openNode, type OpenedNode } from './nodes';
import { createPodFollower, type PodFollower } from './pod-follower';

/** The built-in engine as an endpoint: always connected, every capability. */
export function localEndpointView(label: string = LOCAL_ENDPOINT_LABEL): EndpointView {
  return { id: LOCAL_ENDPOINT_ID, kind: 'podscope-engine', label, connected: true, capabilities: { ...LOCAL_ENDPOINT_CAPABILITIES } };
}

/** How long to wait before re-opening an endpoint's event stream that ended (runtime restarted, socket replaced). */
const EVENTS_RETRY_MS = 3000;

export interface CriEndpointRegistry extends EndpointRegistry {
  /** the CRI client of an added endpoint (for subscribe/ping); undefined for "local" or unknown ids */
  criApi(id: string): CriEndpointApi | undefined;
  /** the endpoint's images (the local store, or the CRI ImageService); NotFound for an unknown id */
  images(id: string): EndpointImages;
  /** the CNI lab: the built-in engine's; NotSupportedError for a CRI endpoint */
  lab(id: string): LabApi;
  /**
   * throughput, topology, CNI CHECK/STATUS: the built-in engine's, or for a CRI runtime's pods the ones this process
   * makes on them (foreign-measurements.ts); NotSupportedError for an endpoint that has none (a Podscope daemon)
   */
  measurements(id: string): MeasurementApi;
  /** a CRI endpoint's pod's ADD as libcni's cache keeps it, for the lab's compare (NotSupported where none is measured) */
  recordedAdd(endpointId: string, sandboxId: string): Promise<LabRecordedAdd>;
  /**
   * exec/attach/port-forward for an endpoint; undefined when it has none (an engine built without streaming, a CRI
   * endpoint whose streaming client is not wired): callers say "this endpoint does not support exec"
   */
  streaming(id: string): ContainerStreaming | undefined;
  /** closes every CRI connection */
  close(): void;
  /**
   * Called with the whole list whenever an added endpoint is lost or comes back (or is added, removed, renamed).
   * While a listener is registered the registry pings the added endpoints every watchIntervalMs.
   */
  onChange(listener: (endpoints: EndpointView[]) => void): () => void;
  /** the events of the measurements made on an added endpoint's pods (a throughput run's progress) */
  subscribeMeasurements(listener: (endpointId: string, event: SandboxEvent) => void): () => void;
  /** the rows each added endpoint's follower found changed (see pod-follower.ts) */
  subscribeDeltas(listener: (endpointId: string, delta: EndpointDelta) => void): () => void;
  /**
   * The pod rows one viewer (a window, a browser tab) shows of an endpoint: only those get their network facts read
   * (PodSandboxStatus), once each until they change. No-op for "local" and unknown ids.
   */
  showing(endpointId: string, viewer: string, ids: string[]): void;
  /** the viewer went away: what it showed no longer counts */
  forgetViewer(viewer: string): void;
  /** every CRI runtime on this machine as a node, for the user to add with one click (see nodes/discover.ts) */
  discoverNodes(): Promise<NodeDiscovery>;
  /**
   * Every pod × every pod of these added endpoints (CRI runtimes whose pods this process measures), one probe run:
   * each cell a real connect, each node placed in its own namespaces (nodes/open.ts). NotSupportedError for an
   * endpoint whose pods this process does not measure (the built-in engine's, a Podscope daemon's).
   */
  probeMatrix(endpointIds: string[], opts?: { trace?: boolean }): Promise<ProbeMatrix>;
}

export interface EndpointRegistryOptions extends CriConnectionOptions {
  /** the in-process engine (or the stand-in that explains why it could not start) */
  local: Engine;
  /** node discovery on this machine; default the real one (/proc and CRI Version) */
  discoverNodes?: () => Promise<NodeDiscovery>;
  localLabel?: string;
  /**
   * Measures an added CRI runtime's pods on this node (default: the `measureForeign` of `local`; absent, as on the
   * stand-in for an engine that could not start: those endpoints have no measurements). Never used for a Podscope
   * daemon, whose pods its own engine measures. node: where the runtime lives (a kind node), from its opening.
   */
  foreignMeasurer?: (source: ForeignSource, opts?: { cniCacheDir?: string; node?: ForeignNode }) => ForeignMeasurements;
  /** measures across several added runtimes (the matrix); default: the `measureNodes` of `local` */
  nodesMeasurer?: (nodes: Array<{ source: ForeignSource; node: ForeignNode }>) => NodesMeasurements;
  /** the local engine's image store (default: the `images` property of `local` when it has one) */
  localImages?: () => ImageStore | undefined;
  /** the local engine's streaming (default: the `streaming` property of `local`); returning undefined offers none */
  localStreaming?: () => ContainerStreaming | undefined;
  /** the ContainerStreaming of an added CRI endpoint; default: the CRI client's own (Exec/Attach/PortForward URLs,
   * then SPDY to the runtime's streaming server); return undefined to offer no streaming there */
  criStreaming?: (api: CriEndpointApi, address: string) => ContainerStreaming | undefined;
  /** how long list() and the watch wait for each endpoint's Version before calling it disconnected (ms), default 900 */
  pingTimeoutMs?: number;
  /** how often the watch pings the added endpoints (ms), default 1000; a lost daemon shows within about two of these */
  watchIntervalMs?: number;
  /**
   * An endpoint that answered the follower or a ping within this long is not pinged again: the answers prove it
   * alive, and a dropped connection, a failed list or an event stream that ends (a runtime that dies closes its
   * socket) triggers a check at once, so a lost daemon still shows within the watch interval. Default 6000.
   */
  livenessMs?: number;
  /** the follower's re-list period for runtimes without GetContainerEvents (ms), default 5000 */
  relistMs?: number;
}

/** A plain object (callers and tests spread it to replace a method), over the Registry below. */
export function createEndpointRegistry(options: EndpointRegistryOptions): CriEndpointRegistry {
  const r = new Registry(options);
  return {
    list: () => r.list(),
    add: (req) => r.add(req),
    remove: (id) => r.remove(id),
    rename: (id, label) => r.rename(id, label),
    api: (id) => r.api(id),
    criApi: (id) => r.criApi(id),
    images: (id) => r.images(id),
    capabilities: (id) => r.capabilities(id),
    lab: (id) => r.lab(id),
    measurements: (id) => r.measurements(id),
    recordedAdd: (endpointId, sandboxId) => r.recordedAdd(endpointId, sandboxId),
    streaming: (id) => r.streaming(id),
    subscribe: (listener) => r.subscribe(listener),
    subscribeDeltas: (listener) => r.subscribeDeltas(listener),
    subscribeMeasurements: (listener) => r.subscribeMeasurements(listener),
    onChange: (listener) => r.onChange(listener),
    showing: (endpointId, viewer, ids) => r.showing(endpointId, viewer, ids),
    forgetViewer: (viewer) => r.forgetViewer(viewer),
    discoverNodes: () => (options.discoverNodes ?? discoverHostNodes)(),
    probeMatrix: (ids, opts) => r.probeMatrix(ids, opts),
    close: () => r.close(),
  };
}

class Registry implements Omit<CriEndpointRegistry, 'discoverNodes'> {
  private readonly entries = new Map<string, CriEntry>();
  /** socket paths with an add() in progress: reserved before anything is awaited, so two adds cannot both pass */
  private readonly adding = new Set<string>();
  /** each added endpoint opened as a node once, on its first measurement (discovery reads all of /proc) */
  private readonly openings = new Map<string, Promise<OpenedNode>>();
  private closed = false;
  private next = 1;
  private readonly eventListeners = new Set<(endpointId: string, event: SandboxEvent) => void>();
  private readonly deltaListeners = new Set<(endpointId: string, delta: EndpointDelta) => void>();
  private readonly measurementListeners = new Set<(endpointId: string, event: SandboxEvent) => void>();
  private readonly watch: EndpointWatch;

  constructor(private readonly options: EndpointRegistryOptions) {
    this.watch = new EndpointWatch({
      entries: () => [...this.entries.values()],
      snapshot: () => [this.localView(), ...[...this.entries.values()].map((e) => e.view)],
      isCurrent: (e) => this.entries.get(e.id) === e,
      pingTimeoutMs: options.pingTimeoutMs ?? 900,
      intervalMs: options.watchIntervalMs ?? 1000,
      livenessMs: options.livenessMs ?? 6000,
    });
  }

  async list(): Promise<EndpointView[]> {
    // an endpoint its follower hears from is connected without asking again (the UI lists this every second)
    const added = [...this.entries.values()].map((e) => (this.watch.provenAlive(e) ? e.view : this.watch.refresh(e)));
    return [this.localView(), ...(await Promise.all(added))];
  }

  onChange(listener: (endpoints: EndpointView[]) => void): () => void {
    return this.watch.onChange(listener);
  }

  async rename(id: string, label: string): Promise<EndpointView> {
    if (id === LOCAL_ENDPOINT_ID) throw new PodscopeError('FailedPrecondition', 'the local endpoint cannot be renamed');
    const e = this.entry(id);
    const trimmed = label.trim();
    if (!trimmed) throw new PodscopeError('InvalidArgument', 'label: an endpoint needs a non-empty label', { details: { field: 'label' } });
    e.label = trimmed;
    e.view = { ...e.view, label: trimmed };
    this.watch.notify();
    return e.view;
  }

  async add(req: AddEndpointRequest): Promise<EndpointView> {
    // the router checked it already; a direct caller (a test, a saved list) gets the same answer before anything is dialed
    if (req.cniResultsDir !== undefined) {
      const parsed = CniResultsDirSchema.safeParse(req.cniResultsDir);
      if (!parsed.success)
        throw new PodscopeError('InvalidArgument', parsed.error.issues.map((i) => `cniResultsDir: ${i.message}`).join('; '), {
          details: { field: 'cniResultsDir' },
        });
    }
    const { address, socketPath } = normalizeAddress(req.address);
    const { api, version, capabilities } = await this.connect(address, socketPath);
    const id = `cri-${this.next++}`;
    const view = newEndpointView(id, address, socketPath, version, capabilities, req.label);
    // the UI never polls: the follower pushes what changes, by events where served, else by re-listing
    const follower = this.follow(id, api, capabilities.events);
    const resultsDir = req.cniResultsDir?.trim() || DEFAULT_CNI_RESULTS_DIR;
    const measurer = this.measurerFor(id, api, capabilities, cniCacheDirOf(resultsDir));
    if (measurer) view.capabilities = { ...view.capabilities, liveNetwork: true, measurements: true };
    if (measurer) view.cniResultsDir = resultsDir.replace(/\/+$/, '');
    const entry: CriEntry = { id, label: view.label, api, routed: routedApi(api, follower, measurer), view, follower, measurer };
    // a dropped connection (the daemon exited) is checked at once: no ping is needed to notice it
    entry.stopConnectionWatch = api.onConnectionLost(() => void this.watch.checkNow(entry));
    entry.streaming = this.options.criStreaming ? this.options.criStreaming(api, address) : api.streaming;
    // claimed only when the runtime serves Exec and a client for its streaming server is at hand
    view.capabilities = { ...view.capabilities, streaming: capabilities.streaming === true && !!entry.streaming };
    this.entries.set(id, entry);
    this.watch.notify();
    return view;
  }

  /** Dials the socket (only an existing unix socket), checks it speaks CRI and probes what it serves. */
  private async connect(address: string, socketPath: string) {
    for (const e of this.entries.values())
      if (e.api.socketPath === socketPath)
        throw new PodscopeError('AlreadyExists', `CRI endpoint ${socketPath} is already added as "${e.id}"`);
    if (this.adding.has(socketPath)) throw new PodscopeError('AlreadyExists', `CRI endpoint ${socketPath} is being added already`);
    this.adding.add(socketPath);
    let api: CriEndpointApi | undefined;
    try {
      // only an existing unix socket is dialed; anything else gets one answer that tells nothing about the path
      await checkEndpointSocket(socketPath);
      api = createCriEndpointApi(address, this.options);
      const version = await api.connect();
      const capabilities = await probeCapabilities(api);
      if (this.closed) throw new PodscopeError('Unavailable', `the endpoint registry was closed while ${socketPath} was being added`);
      return { api, version, capabilities };
    } catch (e) {
      api?.close();
      throw e;
    } finally {
      this.adding.delete(socketPath);
    }
  }

  /**
   * The measurements of a CRI runtime's pods, made here on the node (undefined for a Podscope daemon, whose own engine
   * measures its pods, or when this process cannot measure). Its events reach the router under the endpoint's id.
   */
  private measurerFor(id: string, api: CriEndpointApi, capabilities: EndpointCapabilities, cniCacheDir: string): LazyMeasurer | undefined {
    const make = this.options.foreignMeasurer ?? this.options.local.measureForeign?.bind(this.options.local);
    if (!make || capabilities.pluginTrace) return undefined;
    // placed where the runtime lives: a kind node's pods are found through its root and measured from its netns
    const measurer = lazyForeignMeasurer(async () => {
      const { source, node } = await this.opened(id, api);
      return make(source, { cniCacheDir, ...(node ? { node } : {}) });
    });
    measurer.subscribe((event) => {
      for (const l of this.measurementListeners) {
        try {
          l(id, event);
        } catch {
          // one broken listener must not starve the others
        }
      }
    });
    return measurer;
  }

  /** the endpoint opened as a node (nodes/open.ts), once; a failed opening is not kept, the next verb tries again */
  private opened(id: string, api: CriEndpointApi): Promise<OpenedNode> {
    let o = this.openings.get(id);
    if (!o) {
      o = openNode(api, { discover: this.options.discoverNodes ?? discoverHostNodes });
      this.openings.set(id, o);
      o.catch(() => {
        if (this.openings.get(id) === o) this.openings.delete(id);
      });
    }
    return o;
  }

  async probeMatrix(endpointIds: string[], opts: { trace?: boolean } = {}): Promise<ProbeMatrix> {
    const make = this.options.nodesMeasurer ?? this.options.local.measureNodes?.bind(this.options.local);
    const ids = [...new Set(endpointIds)];
    for (const id of ids) {
      if (id === LOCAL_ENDPOINT_ID) throw notLocalMatrix(id, "the built-in engine's pods are measured by its own probe");
      const e = this.entry(id);
      if (e.view.capabilities.pluginTrace) throw notLocalMatrix(id, 'is a Podscope daemon: its own engine measures its pods');
    }
    if (!make) throw new PodscopeError('Unavailable', 'the matrix needs the local engine, which is not running');
    const nodes = await Promise.all(
      ids.map(async (id) => {
        const e = this.entry(id);
        const { source, node } = await this.opened(id, e.api);
        // a runtime discovery does not know is a node in the host's namespaces, under the name the user gave it
        return { source, node: node ?? { name: e.label, addresses: [], podSubnets: [] } };
      }),
    );
    const m = make(nodes);
    try {
      return await m.matrix({ trace: opts.trace === true });
    } finally {
      m.close();
    }
  }

  /** The endpoint's follower: GetContainerEvents where served, else one ListPodSandbox every few seconds. */
  private follow(id: string, api: CriEndpointApi, events: boolean): PodFollower {
    return createPodFollower({
      source: {
        listOnce: () => api.listOnce(),
        listContainersOnce: () => api.listContainersOnce(),
        networkOf: (podId) => api.networkOf(podId),
        exitOf: (containerId) => api.exitOf(containerId),
        subscribe: (listener, onError, onContainerEvent) =>
          api.subscribe(
            (event) => {
              listener(event);
              for (const l of this.eventListeners) l(id, event);
            },
            onError,
            onContainerEvent,
          ),
      },
      events,
      eventsRetryMs: EVENTS_RETRY_MS,
      ...(this.options.relistMs !== undefined && { relistMs: this.options.relistMs }),
      onDelta: (delta) => this.pushDelta(id, delta),
      // a failed list or an ended stream may mean the runtime is gone: check now, not at the next watch tick
      onFailure: () => {
        const e = this.entries.get(id);
        if (e) void this.watch.checkNow(e);
      },
      // an old or partial runtime: its pods are listed, its containers shown as unavailable
      onContainersUnavailable: () => {
        const e = this.entries.get(id);
        if (!e) return;
        e.view = { ...e.view, capabilities: { ...e.view.capabilities, containers: false } };
        this.watch.notify();
      },
    });
  }

  private pushDelta(id: string, delta: EndpointDelta): void {
    for (const l of this.deltaListeners) {
      try {
        l(id, delta);
      } catch {
        // one broken listener must not starve the others
      }
    }
  }

  async remove(id: string): Promise<void> {
    if (id === LOCAL_ENDPOINT_ID) throw new PodscopeError('FailedPrecondition', 'the local endpoint cannot be removed');
    const e = this.entry(id);
    this.entries.delete(id);
    this.openings.delete(id);
    closeEntry(e);
    this.watch.notify();
  }

  subscribe(listener: (endpointId: string, event: SandboxEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  subscribeDeltas(listener: (endpointId: string, delta: EndpointDelta) => void): () => void {
    this.deltaListeners.add(listener);
    return () => this.deltaListeners.delete(listener);
  }

  subscribeMeasurements(listener: (endpointId: string, event: SandboxEvent) => void): () => void {
    this.measurementListeners.add(listener);
    return () => this.measurementListeners.delete(listener);
  }

  showing(endpointId: string, viewer: string, ids: string[]): void {
    this.entries.get(endpointId)?.follower.showing(viewer, ids);
  }

  forgetViewer(viewer: string): void {
    for (const e of this.entries.values()) e.follower.forgetViewer(viewer);
  }

  api(id: string): EndpointApi {
    if (id === LOCAL_ENDPOINT_ID) return this.options.local;
    return this.entry(id).routed;
  }

  capabilities(id: string): EndpointCapabilities {
    return id === LOCAL_ENDPOINT_ID ? this.localView().capabilities : this.entry(id).view.capabilities;
  }

  lab(id: string): LabApi {
    // the lab runs here or nowhere: any other id, added or not, is answered the same
    if (id !== LOCAL_ENDPOINT_ID) throw notLocal(id, 'lab', 'the CNI lab');
    if (!this.options.local.lab) throw new PodscopeError('Unavailable', 'the CNI lab needs the local engine, which is not running');
    return this.options.local.lab;
  }

  async recordedAdd(endpointId: string, sandboxId: string): Promise<LabRecordedAdd> {
    if (endpointId === LOCAL_ENDPOINT_ID)
      throw new PodscopeError('InvalidArgument', 'a pod of the local engine is compared as sandbox:<id>, from its recorded plugin calls');
    // the same refusals as any measurement of the endpoint
    this.measurements(endpointId);
    return this.entry(endpointId).measurer!.recordedAdd(sandboxId);
  }

  measurements(id: string): MeasurementApi {
    if (id !== LOCAL_ENDPOINT_ID) {
      // NotFound for an unknown id before "not supported"
      const e = this.entry(id);
      if (e.measurer) return e.measurer;
      const why = e.view.capabilities.pluginTrace
        ? 'is a Podscope daemon: its own engine measures its pods'
        : 'is a CRI runtime whose pods this process measures, but the local engine that measures them is not running';
      throw notSupported('measurements', `endpoint ${JSON.stringify(id)} ${why}`, { endpointId: id });
    }
    const m = measurementsOf(this.options.local);
    if (!m) throw new PodscopeError('Unavailable', 'measurements need the local engine, which is not running');
    return m;
  }

  criApi(id: string): CriEndpointApi | undefined {
    return this.entries.get(id)?.api;
  }

  images(id: string): EndpointImages {
    if (id === LOCAL_ENDPOINT_ID) {
      const store = this.localStore();
      if (!store) throw new PodscopeError('Unavailable', 'the local engine is not running, so it has no image store');
      return localImages(store);
    }
    const e = this.entry(id);
    return criImages(() => {
      e.images ??= connectCriImages(e.view.address ?? e.api.socketPath, this.options);
      // a failed connect is not cached: the next call tries again
      e.images.catch(() => {
        if (this.entries.get(id) === e) e.images = undefined;
      });
      return e.images;
    }, e.view.address ?? e.api.socketPath);
  }

  streaming(id: string): ContainerStreaming | undefined {
    if (id === LOCAL_ENDPOINT_ID) return this.localStreaming();
    return this.entry(id).streaming;
  }

  close(): void {
    this.closed = true;
    this.watch.close();
    for (const e of this.entries.values()) closeEntry(e);
    this.entries.clear();
  }

  private entry(id: string): CriEntry {
    const e = this.entries.get(id);
    if (!e) throw notFound(`no endpoint "${id}"`);
    return e;
  }

  private localStore(): ImageStore | undefined {
    return this.options.localImages?.() ?? this.options.local.images;
  }

  private localStreaming(): ContainerStreaming | undefined {
    return this.options.localStreaming ? this.options.localStreaming() : this.options.local.streaming;
  }

  private localView(): EndpointView {
    const v = localEndpointView(this.options.localLabel);
    // an engine without streaming, measurements or a lab (or without a store, when it could not start) says so
    // instead of claiming it
    return {
      ...v,
      capabilities: {
        ...v.capabilities,
        streaming: !!this.localStreaming(),
        images: !!this.localStore(),
        measurements: !!measurementsOf(this.options.local),
        lab: !!this.options.local.lab,
      },
    };
  }
}

const notLocalMatrix = (id: string, why: string) =>
  notSupported('matrix', `the matrix measures CRI runtimes' pods from here; endpoint ${JSON.stringify(id)} ${why}`, { endpointId: id });

const notLocal = (id: string, feature: string, what: string) =>
  notSupported(feature, `${what} runs on the local engine only; endpoint ${JSON.stringify(id)} is a CRI runtime`, { endpointId: id });

/** The engine's measurement verbs, when it has them all (the stand-in for an engine that could not start has none). */
function measurementsOf(api: SandboxApi): MeasurementApi | undefined {
  const { throughput, topology, networkTopology, cniCheck, cniStatus } = api;
  if (!throughput || !topology || !networkTopology || !cniCheck || !cniStatus) return undefined;
  return {
    throughput: throughput.bind(api),
    topology: topology.bind(api),
    networkTopology: networkTopology.bind(api),
    cniCheck: cniCheck.bind(api),
    cniStatus: cniStatus.bind(api),
  };
}
