/**
 * The endpoints the app can show: "local" (the in-process engine) plus CRI runtime.v1 sockets the user added
 * (containerd, CRI-O, a Podscope daemon). Adding connects first (Version), so a wrong path is an immediate,
 * clear Unavailable error. Capabilities are probed from what the runtime actually answers, never assumed:
 * plugin trace only from Podscope, CNI config only when Status verbose carries it, events only when
 * GetContainerEvents is served, preview never over CRI.
 */
import {
  LOCAL_ENDPOINT_CAPABILITIES,
  LOCAL_ENDPOINT_ID,
  LOCAL_ENDPOINT_LABEL,
  type AddEndpointRequest,
  type EndpointCapabilities,
  type EndpointDelta,
  type EndpointRegistry,
  type EndpointView,
} from '../../shared/domain/endpoints';
import { PodscopeError, notFound, notSupported } from '../../shared/domain/errors';
import type { LabApi } from '../../shared/domain/lab';
import type { MeasurementApi, SandboxApi, SandboxEvent } from '../../shared/domain/sandbox';
import { normalizeAddress } from '../cri/address';
import type { CriConnectionOptions } from '../cri/client/connection';
import { createCriEndpointApi, type CriEndpointApi } from '../cri/client/cri-endpoint-api';
import { checkEndpointSocket } from '../cri/client/socket-check';
import { connectCriImages, type CriImageApi } from '../cri/client/cri-image-api';
import type { ContainerStreaming, Engine, ImageStore } from '../engine/api';
import { criImages, localImages, type EndpointImages } from './images';
import type { ContainerFilter } from '../../shared/domain/container';
import type { SandboxFilter } from '../../shared/domain/sandbox';
import { createPodFollower, type PodFollower } from './pod-follower';

/** The built-in engine as an endpoint: always connected, every capability. */
export function localEndpointView(label: string = LOCAL_ENDPOINT_LABEL): EndpointView {
  return { id: LOCAL_ENDPOINT_ID, kind: 'podscope-engine', label, connected: true, capabilities: { ...LOCAL_ENDPOINT_CAPABILITIES } };
}

interface CriEntry {
  id: string;
  label: string;
  api: CriEndpointApi;
  /** what the router gets: the client, with its unfiltered lists answered from the follower */
  routed: CriEndpointApi;
  view: EndpointView;
  /** the ImageService client, opened on first use */
  images?: Promise<CriImageApi>;
  streaming?: ContainerStreaming;
  follower: PodFollower;
  /** when the last ping was answered */
  pingedAt?: number;
  stopConnectionWatch?: () => void;
}

/** How long to wait before re-opening an endpoint's event stream that ended (runtime restarted, socket replaced). */
const EVENTS_RETRY_MS = 3000;

/**
 * The client as the router sees it: an unfiltered pod or container list is the follower's (no RPC at all); a
 * filtered one (the CLI, a pod's own containers) still asks the runtime.
 */
function routedApi(api: CriEndpointApi, follower: PodFollower): CriEndpointApi {
  return {
    ...api,
    list: (filter?: SandboxFilter) => (filter && Object.keys(filter).length > 0 ? api.list(filter) : follower.pods()),
    listContainers: (filter?: ContainerFilter) =>
      filter && Object.values(filter).some((v) => v !== undefined && v !== '') ? api.listContainers(filter) : follower.containers(),
  };
}

export interface CriEndpointRegistry extends EndpointRegistry {
  /** the CRI client of an added endpoint (for subscribe/ping); undefined for "local" or unknown ids */
  criApi(id: string): CriEndpointApi | undefined;
  /** the endpoint's images (the local store, or the CRI ImageService); NotFound for an unknown id */
  images(id: string): EndpointImages;
  /** the CNI lab: the built-in engine's; NotSupportedError for a CRI endpoint */
  lab(id: string): LabApi;
  /** throughput, topology, CNI CHECK/STATUS: the built-in engine's; NotSupportedError for a CRI endpoint */
  measurements(id: string): MeasurementApi;
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
  /** the rows each added endpoint's follower found changed (see pod-follower.ts) */
  subscribeDeltas(listener: (endpointId: string, delta: EndpointDelta) => void): () => void;
}

export interface EndpointRegistryOptions extends CriConnectionOptions {
  /** the in-process engine (or the stand-in that explains why it could not start) */
  local: Engine;
  localLabel?: string;
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

async function probeCapabilities(api: CriEndpointApi): Promise<EndpointCapabilities> {
  const isPodscope = await api.isPodscope();
  const [cniConfig, events, streaming] = await Promise.all([
    api.cniConfig().then(
      () => true,
      () => false,
    ),
    api.supportsEvents(),
    api.supportsStreaming(),
  ]);
  return {
    pluginTrace: isPodscope,
    preview: false,
    cniConfig,
    events,
    liveNetwork: false,
    images: true,
    streaming,
    measurements: false,
    lab: false,
  };
}

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

function closeImages(e: CriEntry) {
  const pending = e.images;
  e.images = undefined;
  void pending?.then(
    (c) => c.close(),
    () => {},
  );
}

export function createEndpointRegistry(options: EndpointRegistryOptions): CriEndpointRegistry {
  const entries = new Map<string, CriEntry>();
  /** socket paths with an add() in progress: reserved before anything is awaited, so two adds cannot both pass */
  const adding = new Set<string>();
  let closed = false;
  let next = 1;
  const eventListeners = new Set<(endpointId: string, event: SandboxEvent) => void>();

  const deltaListeners = new Set<(endpointId: string, delta: EndpointDelta) => void>();

  /** The endpoint's follower: GetContainerEvents where served, else one ListPodSandbox every few seconds. */
  const follow = (id: string, api: CriEndpointApi, events: boolean): PodFollower =>
    createPodFollower({
      source: {
        listOnce: () => api.listOnce(),
        listContainersOnce: () => api.listContainersOnce(),
        networkOf: (podId) => api.networkOf(podId),
        exitOf: (containerId) => api.exitOf(containerId),
        subscribe: (listener, onError, onContainerEvent) =>
          api.subscribe(
            (event) => {
              listener(event);
              for (const l of eventListeners) l(id, event);
            },
            onError,
            onContainerEvent,
          ),
      },
      events,
      eventsRetryMs: EVENTS_RETRY_MS,
      ...(options.relistMs !== undefined && { relistMs: options.relistMs }),
      onDelta: (delta) => {
        for (const l of deltaListeners) {
          try {
            l(id, delta);
          } catch {
            // one broken listener must not starve the others
          }
        }
      },
      // a failed list or an ended stream may mean the runtime is gone: check now, not at the next watch tick
      onFailure: () => {
        const e = entries.get(id);
        if (e) void checkNow(e);
      },
    });
  const localStore = () => options.localImages?.() ?? options.local.images;
  const localStreaming = () => (options.localStreaming ? options.localStreaming() : options.local.streaming);
  const localView = (): EndpointView => {
    const v = localEndpointView(options.localLabel);
    // an engine without streaming, measurements or a lab (or without a store, when it could not start) says so
    // instead of claiming it
    return {
      ...v,
      capabilities: {
        ...v.capabilities,
        streaming: !!localStreaming(),
        images: !!localStore(),
        measurements: !!measurementsOf(options.local),
        lab: !!options.local.lab,
      },
    };
  };
  const entryOf = (id: string): CriEntry => {
    const e = entries.get(id);
    if (!e) throw notFound(`no endpoint "${id}"`);
    return e;
  };
  const notLocal = (id: string, feature: string, what: string) =>
    notSupported(feature, `${what} runs on the local engine only; endpoint ${JSON.stringify(id)} is a CRI runtime`, { endpointId: id });

  const refresh = async (e: CriEntry): Promise<EndpointView> => {
    try {
      const v = await e.api.ping(options.pingTimeoutMs ?? 900);
      e.pingedAt = Date.now();
      e.view = { ...e.view, connected: true, runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion };
      delete e.view.error;
    } catch (err) {
      e.view = { ...e.view, connected: false, error: (err as Error).message };
    }
    return e.view;
  };

  const changeListeners = new Set<(endpoints: EndpointView[]) => void>();
  const snapshot = () => [localView(), ...[...entries.values()].map((e) => e.view)];
  const notify = () => {
    const list = snapshot();
    for (const l of changeListeners) {
      try {
        l(list);
      } catch {
        // one broken listener must not starve the others
      }
    }
  };
  /**
   * A daemon that dies closes no stream the UI could notice (containerd streams no events when it is gone), so the
   * watch pings: a flip of connected (or a new error text) is pushed to the listeners at once.
   */
  let watchTimer: NodeJS.Timeout | undefined;
  let watching = false;
  const stateOf = (e: CriEntry) => `${e.view.connected}|${e.view.error ?? ''}`;
  /** a connected endpoint whose follower hears from it needs no ping (idle endpoints cost almost no RPCs) */
  const provenAlive = (e: CriEntry) =>
    e.view.connected &&
    e.follower.healthy &&
    Date.now() - Math.max(e.follower.lastAnswerAt, e.pingedAt ?? 0) < (options.livenessMs ?? 6000);
  const watchOnce = async () => {
    const due = [...entries.values()].filter((e) => !provenAlive(e));
    const before = new Map(due.map((e) => [e.id, stateOf(e)]));
    await Promise.all(due.map(refresh));
    const changed = due.some((e) => before.get(e.id) !== stateOf(e));
    // back: re-sync its rows now rather than at the next re-list or stream retry
    for (const e of due) if (e.view.connected && before.get(e.id)?.startsWith('false')) void e.follower.resync().catch(() => undefined);
    if (changed && !closed) notify();
  };
  const checkNow = async (e: CriEntry) => {
    const before = stateOf(e);
    await refresh(e);
    if (!closed && entries.get(e.id) === e && stateOf(e) !== before) notify();
  };
  const scheduleWatch = () => {
    if (closed || changeListeners.size === 0 || watching) return;
    watching = true;
    const tick = () => {
      if (closed || changeListeners.size === 0) {
        watching = false;
        return;
      }
      void watchOnce().finally(() => {
        if (closed || changeListeners.size === 0) {
          watching = false;
          return;
        }
        watchTimer = setTimeout(tick, options.watchIntervalMs ?? 1000);
        watchTimer.unref();
      });
    };
    watchTimer = setTimeout(tick, options.watchIntervalMs ?? 1000);
    watchTimer.unref();
  };

  return {
    async list() {
      // an endpoint its follower hears from is connected without asking again (the UI lists this every second)
      return [localView(), ...(await Promise.all([...entries.values()].map((e) => (provenAlive(e) ? e.view : refresh(e)))))];
    },
    onChange(listener) {
      changeListeners.add(listener);
      scheduleWatch();
      return () => {
        changeListeners.delete(listener);
        if (changeListeners.size === 0) {
          clearTimeout(watchTimer);
          watching = false;
        }
      };
    },
    async rename(id, label) {
      if (id === LOCAL_ENDPOINT_ID) throw new PodscopeError('FailedPrecondition', 'the local endpoint cannot be renamed');
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      const trimmed = label.trim();
      if (!trimmed)
        throw new PodscopeError('InvalidArgument', 'label: an endpoint needs a non-empty label', { details: { field: 'label' } });
      e.label = trimmed;
      e.view = { ...e.view, label: trimmed };
      notify();
      return e.view;
    },
    async add(req: AddEndpointRequest) {
      const { address, socketPath } = normalizeAddress(req.address);
      for (const e of entries.values())
        if (e.api.socketPath === socketPath)
          throw new PodscopeError('AlreadyExists', `CRI endpoint ${socketPath} is already added as "${e.id}"`);
      if (adding.has(socketPath)) throw new PodscopeError('AlreadyExists', `CRI endpoint ${socketPath} is being added already`);
      adding.add(socketPath);
      let api: CriEndpointApi | undefined;
      let version;
      let capabilities;
      try {
        // only an existing unix socket is dialed; anything else gets one answer that tells nothing about the path
        await checkEndpointSocket(socketPath);
        api = createCriEndpointApi(address, options);
        version = await api.connect();
        capabilities = await probeCapabilities(api);
        if (closed) throw new PodscopeError('Unavailable', `the endpoint registry was closed while ${socketPath} was being added`);
      } catch (e) {
        api?.close();
        throw e;
      } finally {
        adding.delete(socketPath);
      }
      const id = `cri-${next++}`;
      const view: EndpointView = {
        id,
        kind: 'cri',
        // short enough for the sidebar's selector; the full socket path is shown under it
        label: req.label ?? `${version.runtimeName} · ${socketPath.split('/').pop() || socketPath}`,
        address,
        runtimeName: version.runtimeName,
        runtimeVersion: version.runtimeVersion,
        connected: true,
        capabilities,
      };
      // the UI never polls: the follower pushes what changes, by events where served, else by re-listing
      const follower = follow(id, api, capabilities.events);
      const entry: CriEntry = { id, label: view.label, api, routed: routedApi(api, follower), view, follower };
      // a dropped connection (the daemon exited) is checked at once: no ping is needed to notice it
      entry.stopConnectionWatch = api.onConnectionLost(() => void checkNow(entry));
      entry.streaming = options.criStreaming ? options.criStreaming(api, address) : api.streaming;
      // claimed only when the runtime serves Exec and a client for its streaming server is at hand
      view.capabilities = { ...view.capabilities, streaming: capabilities.streaming === true && !!entry.streaming };
      entries.set(id, entry);
      notify();
      return view;
    },
    async remove(id) {
      if (id === LOCAL_ENDPOINT_ID) throw new PodscopeError('FailedPrecondition', 'the local endpoint cannot be removed');
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      entries.delete(id);
      e.stopConnectionWatch?.();
      e.follower.close();
      e.api.close();
      closeImages(e);
      notify();
    },
    subscribe(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    subscribeDeltas(listener) {
      deltaListeners.add(listener);
      return () => deltaListeners.delete(listener);
    },
    api(id) {
      if (id === LOCAL_ENDPOINT_ID) return options.local;
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      return e.routed;
    },
    criApi(id) {
      return entries.get(id)?.api;
    },
    capabilities(id) {
      return id === LOCAL_ENDPOINT_ID ? localView().capabilities : entryOf(id).view.capabilities;
    },
    lab(id) {
      if (id !== LOCAL_ENDPOINT_ID) throw notLocal(id, 'lab', 'the CNI lab');
      if (!options.local.lab) throw new PodscopeError('Unavailable', 'the CNI lab needs the local engine, which is not running');
      return options.local.lab;
    },
    measurements(id) {
      if (id !== LOCAL_ENDPOINT_ID) {
        entryOf(id); // NotFound for an unknown id before "not supported"
        throw notLocal(id, 'measurements', 'measuring (throughput, topology, CNI CHECK/STATUS)');
      }
      const m = measurementsOf(options.local);
      if (!m) throw new PodscopeError('Unavailable', 'measurements need the local engine, which is not running');
      return m;
    },
    images(id) {
      if (id === LOCAL_ENDPOINT_ID) {
        const store = localStore();
        if (!store) throw new PodscopeError('Unavailable', 'the local engine is not running, so it has no image store');
        return localImages(store);
      }
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      return criImages(() => {
        e.images ??= connectCriImages(e.view.address ?? e.api.socketPath, options);
        // a failed connect is not cached: the next call tries again
        e.images.catch(() => {
          if (entries.get(id) === e) e.images = undefined;
        });
        return e.images;
      }, e.view.address ?? e.api.socketPath);
    },
    streaming(id) {
      if (id === LOCAL_ENDPOINT_ID) return localStreaming();
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      return e.streaming;
    },
    close() {
      closed = true;
      clearTimeout(watchTimer);
      changeListeners.clear();
      for (const e of entries.values()) {
        e.stopConnectionWatch?.();
        e.follower.close();
        e.api.close();
        closeImages(e);
      }
      entries.clear();
    },
  };
}
