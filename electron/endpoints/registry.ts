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
  type EndpointRegistry,
  type EndpointView,
} from '../../shared/domain/endpoints';
import { PodscopeError, notFound } from '../../shared/domain/errors';
import type { SandboxApi, SandboxEvent } from '../../shared/domain/sandbox';
import { normalizeAddress } from '../cri/address';
import type { CriConnectionOptions } from '../cri/client/connection';
import { createCriEndpointApi, type CriEndpointApi } from '../cri/client/cri-endpoint-api';
import { checkEndpointSocket } from '../cri/client/socket-check';
import { connectCriImages, type CriImageApi } from '../cri/client/cri-image-api';
import type { ContainerStreaming } from '../engine/containers/streaming';
import type { ImageStore } from '../engine/images/types';
import { criImages, localImages, type EndpointImages } from './images';

/** The built-in engine as an endpoint: always connected, every capability. */
export function localEndpointView(label: string = LOCAL_ENDPOINT_LABEL): EndpointView {
  return { id: LOCAL_ENDPOINT_ID, kind: 'podscope-engine', label, connected: true, capabilities: { ...LOCAL_ENDPOINT_CAPABILITIES } };
}

interface CriEntry {
  id: string;
  label: string;
  api: CriEndpointApi;
  view: EndpointView;
  stopEvents?: () => void;
  /** the ImageService client, opened on first use */
  images?: Promise<CriImageApi>;
  streaming?: ContainerStreaming;
}

/** How long to wait before re-opening an endpoint's event stream that ended (runtime restarted, socket replaced). */
const EVENTS_RETRY_MS = 3000;

export interface CriEndpointRegistry extends EndpointRegistry {
  /** the CRI client of an added endpoint (for subscribe/ping); undefined for "local" or unknown ids */
  criApi(id: string): CriEndpointApi | undefined;
  /** the endpoint's images (the local store, or the CRI ImageService); NotFound for an unknown id */
  images(id: string): EndpointImages;
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
}

export interface EndpointRegistryOptions extends CriConnectionOptions {
  /** the in-process engine */
  local: SandboxApi;
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
}

async function probeCapabilities(api: CriEndpointApi): Promise<EndpointCapabilities> {
  const isPodscope = await api.isPodscope();
  const [cniConfig, events] = await Promise.all([
    api.cniConfig().then(
      () => true,
      () => false,
    ),
    api.supportsEvents(),
  ]);
  return { pluginTrace: isPodscope, preview: false, cniConfig, events, liveNetwork: false, images: true };
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

  /** GetContainerEvents of one endpoint, fanned out to subscribers and re-opened while the endpoint stays added. */
  const followEvents = (e: CriEntry) => {
    let retry: NodeJS.Timeout | undefined;
    let stop = () => {};
    const open = () => {
      stop = e.api.subscribe(
        (event) => {
          for (const l of eventListeners) l(e.id, event);
        },
        () => {
          if (entries.get(e.id) !== e) return;
          retry = setTimeout(open, EVENTS_RETRY_MS);
          retry.unref();
        },
      );
    };
    open();
    e.stopEvents = () => {
      clearTimeout(retry);
      stop();
    };
  };
  const localStore = () => options.localImages?.() ?? (options.local as { images?: ImageStore }).images;
  const localStreaming = () =>
    options.localStreaming ? options.localStreaming() : (options.local as { streaming?: ContainerStreaming }).streaming;
  const localView = (): EndpointView => {
    const v = localEndpointView(options.localLabel);
    // an engine without streaming (or without a store, when it could not start) says so instead of claiming it
    return {
      ...v,
      capabilities: { ...v.capabilities, ...(!localStreaming() && { streaming: false }), ...(!localStore() && { images: false }) },
    };
  };

  const refresh = async (e: CriEntry): Promise<EndpointView> => {
    try {
      const v = await e.api.ping(options.pingTimeoutMs ?? 900);
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
  const watchOnce = async () => {
    const before = new Map([...entries.values()].map((e) => [e.id, `${e.view.connected}|${e.view.error ?? ''}`]));
    await Promise.all([...entries.values()].map(refresh));
    const changed = [...entries.values()].some((e) => before.get(e.id) !== `${e.view.connected}|${e.view.error ?? ''}`);
    if (changed && !closed) notify();
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
      return [localView(), ...(await Promise.all([...entries.values()].map(refresh)))];
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
      const entry: CriEntry = { id, label: view.label, api, view };
      entry.streaming = options.criStreaming ? options.criStreaming(api, address) : api.streaming;
      view.capabilities = { ...view.capabilities, streaming: !!entry.streaming };
      entries.set(id, entry);
      notify();
      // without this the UI, told the endpoint streams events, would neither poll nor hear anything
      if (capabilities.events) followEvents(entry);
      return view;
    },
    async remove(id) {
      if (id === LOCAL_ENDPOINT_ID) throw new PodscopeError('FailedPrecondition', 'the local endpoint cannot be removed');
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      entries.delete(id);
      e.stopEvents?.();
      e.api.close();
      closeImages(e);
      notify();
    },
    subscribe(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    api(id) {
      if (id === LOCAL_ENDPOINT_ID) return options.local;
      const e = entries.get(id);
      if (!e) throw notFound(`no endpoint "${id}"`);
      return e.api;
    },
    criApi(id) {
      return entries.get(id)?.api;
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
      });
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
        e.stopEvents?.();
        e.api.close();
        closeImages(e);
      }
      entries.clear();
    },
  };
}
