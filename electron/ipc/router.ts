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
import type { Reply } from '../../shared/ipc/wire';
import type { Engine } from '../engine/options';
import type { SenderInfo, SenderPolicy } from './sender';

export interface RouterOptions {
  /** the in-process engine (its events are pushed as endpoint "local") */
  engine: Pick<Engine, 'subscribe' | 'lab'>;
  /** every endpoint, "local" included (see electron/endpoints) */
  endpoints: EndpointRegistry;
  /** who may call; everyone else gets PermissionDenied-like FailedPrecondition */
  isTrustedSender: SenderPolicy;
}

export interface Router {
  handle(channel: string, payload: unknown, sender: SenderInfo): Promise<Reply>;
  subscribe(listener: (e: PushedEvent) => void): () => void;
  dispose(): void;
}

type Handlers = { [C in ChannelName]: (req: ParsedRequestOf<C>) => Promise<unknown> };

export function createRouter(opts: RouterOptions): Router {
  const endpoints = opts.endpoints;
  const api = (id: string) => endpoints.api(id);
  // the lab runs plugins on this host: only the in-process engine has one
  const lab = (id: string) => {
    if (id !== LOCAL_ENDPOINT_ID) throw new PodscopeError('Unimplemented', `the CNI lab runs on the local engine only; endpoint ${JSON.stringify(id)} is a CRI runtime`);
    if (!opts.engine.lab) throw new PodscopeError('Unavailable', 'the CNI lab needs the local engine, which is not running');
    return opts.engine.lab;
  };

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
  };

  const listeners = new Set<(e: PushedEvent) => void>();
  const emit = (e: PushedEvent) => {
    for (const l of listeners) {
      try {
        l(e);
      } catch {
        // one broken subscriber (a closed socket) must not starve the others
      }
    }
  };
  const unsubscribeEngine = opts.engine.subscribe((event) => emit({ kind: 'sandbox', endpointId: LOCAL_ENDPOINT_ID, event }));
  const unsubscribeLab = opts.engine.lab?.subscribe((progress) => emit({ kind: 'lab.progress', endpointId: LOCAL_ENDPOINT_ID, progress }));
  const unsubscribeEndpoints = endpoints.subscribe?.((endpointId, event) => emit({ kind: 'sandbox', endpointId, event }));
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
        const handler = handlers[channel] as (r: unknown) => Promise<unknown>;
        const result = await handler(parsed.data);
        return { ok: true, result: result ?? null };
      } catch (e) {
        return { ok: false, error: serializeError(e) };
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dispose() {
      unsubscribeEngine();
      unsubscribeLab?.();
      unsubscribeEndpoints?.();
      listeners.clear();
    },
  };
}
