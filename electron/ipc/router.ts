/**
 * The transport-agnostic IPC router: validates every request against the channel map, checks the sender and
 * calls the service. It decides nothing about sandboxes. Electron's ipcMain and the browser host's WebSocket
 * both call `handle`, and both forward `subscribe`'s events, so the two front doors cannot drift apart.
 * No `electron` import here on purpose: this file must run in plain Node (browser mode, tests).
 */
import { LOCAL_ENDPOINT_ID } from '../../shared/domain/endpoints';
import { PodscopeError, serializeError } from '../../shared/domain/errors';
import { formatIssues } from '../../shared/domain/config';
import { CHANNELS, isChannelName, type ChannelName } from '../../shared/ipc/channels';
import type { PushedEvent } from '../../shared/ipc/events';
import type { ContainerEvent } from '../../shared/domain/container';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import type { Reply } from '../../shared/ipc/wire';
import type { Engine } from '../engine/api';
import type { SenderInfo, SenderPolicy } from './sender';
import { channelHandlers, type RouterEndpoints } from './router-handlers';
import { StreamSessions } from './stream-sessions';

export interface RouterOptions {
  /** the in-process engine (its events are pushed as endpoint "local") */
  engine: Pick<Engine, 'subscribe' | 'lab'>;
  /** every endpoint, "local" included (see electron/endpoints), with the parts only some endpoints have */
  endpoints: RouterEndpoints;
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

export function createRouter(opts: RouterOptions): Router {
  const endpoints = opts.endpoints;
  const api = (id: string) => endpoints.api(id);
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

  const handlers = channelHandlers({ endpoints, sessions, emit });

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
  const stopForwarding = forwardEvents(opts, sessions, emit);

  return {
    async handle(channel, payload, sender) {
      try {
        const { channel: name, request } = checkRequest(opts.isTrustedSender, channel, payload, sender);
        const handler = handlers[name] as (r: unknown, s: SenderInfo) => Promise<unknown>;
        const result = await handler(request, sender);
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
      stopForwarding();
      listeners.clear();
    },
  };
}

/** The sender may call, the channel exists and the payload matches its schema; anything else is refused here. */
function checkRequest(
  isTrustedSender: SenderPolicy,
  channel: string,
  payload: unknown,
  sender: SenderInfo,
): { channel: ChannelName; request: unknown } {
  if (!isTrustedSender(sender)) {
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
  return { channel, request: parsed.data };
}

/**
 * Pushes what happens to every subscriber: the engine's sandbox and container events and lab progress (endpoint
 * "local"), the added endpoints' rows and events, and the endpoint list when it changes. Returns the unsubscribe.
 */
function forwardEvents(opts: RouterOptions, sessions: StreamSessions, emit: (e: PushedEvent) => void): () => void {
  const endpoints = opts.endpoints;
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
  // what this process measures on an added endpoint's pods (a throughput run's progress) is that endpoint's event
  const unsubscribeMeasurements = endpoints.subscribeMeasurements?.((endpointId, event) => emit({ kind: 'sandbox', endpointId, event }));
  // a daemon that died (or came back) is pushed at once, so every screen shows it without waiting for a poll
  const unwatchEndpoints = endpoints.onChange?.((list) => emit({ kind: 'endpoints.changed', endpoints: list }));
  return () => {
    unsubscribeEngine();
    unsubscribeLab?.();
    unsubscribeEndpoints?.();
    unsubscribeMeasurements?.();
    unwatchEndpoints?.();
  };
}
