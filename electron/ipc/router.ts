/**
 * The transport-agnostic IPC router: validates every request against the channel map, checks the sender and
 * calls the service. It decides nothing about sandboxes. Electron's ipcMain and the browser host's WebSocket
 * both call `handle`, and both forward `subscribe`'s events, so the two front doors cannot drift apart.
 * No `electron` import here on purpose: this file must run in plain Node (browser mode, tests).
 */
import { LOCAL_ENDPOINT_ID, type EndpointRegistry } from '../../shared/domain/endpoints';
import { PodscopeError, serializeError } from '../../shared/domain/errors';
import { formatIssues } from '../../shared/domain/config';
import { CHANNELS, isChannelName, type ChannelName, type ParsedRequestOf } from '../../shared/ipc/channels';
import type { PushedEvent } from '../../shared/ipc/events';
import type { ContainerEvent, ContainerFilter } from '../../shared/domain/container';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import type { Reply } from '../../shared/ipc/wire';
import type { Engine } from '../engine/api';
import type { SenderInfo, SenderPolicy } from './sender';
import type { CriEndpointRegistry } from '../endpoints/registry';
import { StreamSessions } from './stream-sessions';

export interface RouterOptions {
  /** the in-process engine (its events are pushed as endpoint "local") */
  engine: Pick<Engine, 'subscribe' | 'lab'>;
  /** every endpoint, "local" included (see electron/endpoints), with the parts only some endpoints have */
  endpoints: EndpointRegistry &
    Pick<CriEndpointRegistry, 'images' | 'streaming' | 'lab' | 'measurements'> &
    Partial<Pick<CriEndpointRegistry, 'showing' | 'forgetViewer'>>;
  /** log follow poll interval (ms) */
  logPollMs?: number;
  /** who may call; everyone else gets PermissionDenied-like FailedPrecondition */
  isTrustedSender: SenderPolicy;
}

/**
 * An event listener. `target` is set on events meant for one connection only (a session's output): a front door
 * delivers those to that connection alone and everything else to all.
 */
export type RouterListener = (e: PushedEvent, target?: string) => void;

export interface Router {
  handle(channel: string, payload: unknown, sender: SenderInfo): Promise<Reply>;
  subscribe(listener: RouterListener): () => void;
  /** the window or socket with this connection id went away: its sessions end and its forwards close */
  closeConnection(connectionId: string): Promise<void>;
  /** the stream sessions (tests look at what is left open) */
  readonly sessions: StreamSessions;
  dispose(): void;
}

/** who owns a session: the connection, or (a transport without one) the sender itself */
export const ownerOf = (sender: SenderInfo): string => sender.connectionId ?? `${sender.transport}:${sender.url}`;

type Handlers = { [C in ChannelName]: (req: ParsedRequestOf<C>, sender: SenderInfo) => Promise<unknown> };

export function createRouter(opts: RouterOptions): Router {
  const endpoints = opts.endpoints;
  const api = (id: string) => endpoints.api(id);
  // what only some endpoints have comes from the registry, which refuses it with the one NotSupportedError
  const lab = (id: string) => endpoints.lab(id);
  const measurements = (id: string) => endpoints.measurements(id);
  const images = (id: string) => endpoints.images(id);
  const sessions = new StreamSessions({
    streaming: (id) => {
      api(id); // NotFound for an unknown endpoint before "no streaming"
      return endpoints.streaming(id);
    },
    containers: (id) => api(id),
    sandboxName: async (id, podSandboxId) => (await api(id).status(podSandboxId)).metadata.name,
    emit: (e, owner) => emit(e, owner),
    ...(opts.logPollMs !== undefined && { logPollMs: opts.logPollMs }),
  });

  // One line per channel: the handler only forwards to the service.
  const handlers: Handlers = {
    'sandbox.run': (r) => api(r.endpointId).run(r.request),
    'sandbox.stop': (r) => api(r.endpointId).stop(r.id),
    'sandbox.remove': (r) => api(r.endpointId).remove(r.id),
    'sandbox.status': (r) => api(r.endpointId).status(r.id),
    'sandbox.list': (r) => api(r.endpointId).list(r.filter),
    'sandbox.cniConfig': (r) => api(r.endpointId).cniConfig(),
    'sandbox.preview': (r) => api(r.endpointId).preview(r.request),
    'sandbox.runtimeConditions': (r) => api(r.endpointId).runtimeConditions(),
    'sandbox.info': (r) => api(r.endpointId).info(),
    'sandbox.live': (r) => api(r.endpointId).live(r.id),
    'sandbox.probe': (r) => api(r.endpointId).probe(r.id, r.trace ? { trace: true } : undefined),
    'sandbox.lastProbe': (r) => api(r.endpointId).lastProbe(r.id),
    'sandbox.throughput': (r) =>
      measurements(r.endpointId).throughput(r.id, r.durationMs === undefined ? {} : { durationMs: r.durationMs }),
    'sandbox.topology': (r) => measurements(r.endpointId).topology(r.id),
    'network.topology': (r) => measurements(r.endpointId).networkTopology(r.network),
    'sandbox.cniCheck': (r) => measurements(r.endpointId).cniCheck(r.id),
    'network.cniStatus': (r) => measurements(r.endpointId).cniStatus(),
    'containers.list': (r) => api(r.endpointId).listContainers(r.filter as ContainerFilter | undefined),
    'containers.status': (r) => api(r.endpointId).containerStatus(r.id),
    'containers.create': async (r) => {
      const c = api(r.endpointId);
      const { id } = await c.createContainer({ podSandboxId: r.podSandboxId, config: r.config });
      if (!r.start) return { id, started: false };
      await c.startContainer(id);
      return { id, started: true };
    },
    'containers.start': (r) => api(r.endpointId).startContainer(r.id),
    'containers.stop': (r) => api(r.endpointId).stopContainer(r.id, r.timeoutSeconds),
    'containers.remove': (r) => api(r.endpointId).removeContainer(r.id),
    'images.list': (r) => images(r.endpointId).list(),
    'images.inspect': (r) => images(r.endpointId).inspect(r.ref),
    'images.pull': (r, s) =>
      images(r.endpointId).pull(
        r.ref,
        r.requestId === undefined
          ? {}
          : {
              onProgress: (progress) =>
                emit({ kind: 'image.pull', endpointId: r.endpointId, requestId: r.requestId!, progress }, ownerOf(s)),
            },
      ),
    'images.remove': (r) => images(r.endpointId).remove(r.ref),
    'images.load': (r) => images(r.endpointId).load(r.path),
    'stream.exec': async (r, s) => sessions.open(ownerOf(s), r),
    'stream.attach': async (r, s) => sessions.open(ownerOf(s), { ...r, containerId: r.containerId }),
    'stream.write': async (r, s) => sessions.write(ownerOf(s), r.sessionId, Buffer.from(r.data, r.encoding)),
    'stream.closeStdin': async (r, s) => sessions.closeStdin(ownerOf(s), r.sessionId),
    'stream.resize': async (r, s) => sessions.resize(ownerOf(s), r.sessionId, r.size),
    'stream.ack': async (r, s) => sessions.ack(ownerOf(s), r.sessionId, r.bytes),
    'stream.close': (r, s) => sessions.close(ownerOf(s), r.sessionId),
    'logs.follow': (r, s) => sessions.followLogs(ownerOf(s), r),
    'portForward.open': (r, s) => sessions.openForward(ownerOf(s), r),
    'portForward.close': (r, s) => sessions.closeForward(ownerOf(s), r.id),
    'portForward.list': async (_r, s) => sessions.listForwards(ownerOf(s)),
    'lab.validate': (r) => lab(r.endpointId).validate(r.text),
    'lab.run': (r) => lab(r.endpointId).run(r.request),
    'lab.list': (r) => lab(r.endpointId).list(),
    'lab.get': (r) => lab(r.endpointId).get(r.id),
    'lab.diff': (r) => lab(r.endpointId).diff(r.a, r.b),
    'lab.save': (r) => lab(r.endpointId).save(r.request),
    'endpoints.list': () => endpoints.list(),
    'endpoints.add': async (r) => {
      const view = await endpoints.add(r);
      void broadcastEndpoints();
      return view;
    },
    'endpoints.remove': async (r) => {
      await endpoints.remove(r.id);
      void broadcastEndpoints();
    },
    'endpoints.rename': async (r) => {
      const view = await endpoints.rename(r.id, r.label);
      void broadcastEndpoints();
      return view;
    },
    'endpoints.showing': async (r, s) => endpoints.showing?.(r.endpointId, ownerOf(s), r.ids),
  };

  const listeners = new Set<RouterListener>();
  function emit(e: PushedEvent, target?: string) {
    for (const l of listeners) {
      try {
        l(e, target);
      } catch {
        // one broken subscriber (a closed socket) must not starve the others
      }
    }
  }
  const unsubscribeEngine = opts.engine.subscribe((event) => {
    sessions.notify(LOCAL_ENDPOINT_ID, event as SandboxEvent | ContainerEvent);
    emit(
      event.type.startsWith('container.')
        ? { kind: 'container', endpointId: LOCAL_ENDPOINT_ID, event: event as ContainerEvent }
        : { kind: 'sandbox', endpointId: LOCAL_ENDPOINT_ID, event: event as SandboxEvent },
    );
  });
  const unsubscribeLab = opts.engine.lab?.subscribe((progress) => emit({ kind: 'lab.progress', endpointId: LOCAL_ENDPOINT_ID, progress }));
  // added endpoints: their followers push the rows that changed (batched), so the renderer never polls them
  const unsubscribeEndpoints = endpoints.subscribeDeltas
    ? endpoints.subscribeDeltas((endpointId, delta) => {
        sessions.notifyDelta(endpointId, delta);
        emit({ kind: 'delta', endpointId, ...delta });
      })
    : endpoints.subscribe?.((endpointId, event) => {
        sessions.notify(endpointId, event);
        emit({ kind: 'sandbox', endpointId, event });
      });
  // a daemon that died (or came back) is pushed at once, so every screen shows it without waiting for a poll
  const unwatchEndpoints = endpoints.onChange?.((list) => emit({ kind: 'endpoints.changed', endpoints: list }));
  async function broadcastEndpoints() {
    try {
      emit({ kind: 'endpoints.changed', endpoints: await endpoints.list() });
    } catch {
      // listing failed; the renderer refetches on its own schedule
    }
  }

  return {
    async handle(channel, payload, sender) {
      try {
        if (!opts.isTrustedSender(sender)) {
          throw new PodscopeError('FailedPrecondition', 'request refused: the sender is not a trusted Podscope window', {
            details: { transport: sender.transport, url: sender.url },
          });
        }
        if (!isChannelName(channel)) throw new PodscopeError('InvalidArgument', `unknown channel ${JSON.stringify(channel)}`);
        const parsed = CHANNELS[channel].request.safeParse(payload ?? {});
        if (!parsed.success) {
          const issues = formatIssues(parsed.error);
          throw new PodscopeError('InvalidArgument', `invalid ${channel} request: ${issues.join('; ')}`, {
            details: { channel, issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
          });
        }
        const handler = handlers[channel] as (r: unknown, s: SenderInfo) => Promise<unknown>;
        const result = await handler(parsed.data, sender);
        return { ok: true, result: result ?? null };
      } catch (e) {
        return { ok: false, error: serializeError(e) };
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    closeConnection: (connectionId) => {
      endpoints.forgetViewer?.(connectionId);
      return sessions.closeOwner(connectionId);
    },
    sessions,
    dispose() {
      void sessions.closeAll();
      unsubscribeEngine();
      unsubscribeLab?.();
      unsubscribeEndpoints?.();
      unwatchEndpoints?.();
      listeners.clear();
    },
  };
}
