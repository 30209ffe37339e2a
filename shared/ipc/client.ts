/**
 * The typed client every renderer (and test) uses. It sits on a Transport, which only moves Replies and events;
 * this layer turns an error Reply back into a typed PodscopeError so callers can switch on `code`.
 */
import { deserializeError } from '../domain/errors';
import type { ChannelName, RequestOf, ResponseOf } from './channels';
import type { PushedEvent } from './events';
import type { Reply } from './wire';

export interface Transport {
  readonly kind: 'electron' | 'websocket' | 'memory';
  invoke(channel: ChannelName, payload: unknown): Promise<Reply>;
  /** returns an unsubscribe function */
  onEvent(listener: (e: PushedEvent) => void): () => void;
}

export interface PodscopeClient {
  readonly transport: Transport['kind'];
  call<C extends ChannelName>(channel: C, request: RequestOf<C>): Promise<ResponseOf<C>>;
  onEvent(listener: (e: PushedEvent) => void): () => void;
}

export function createClient(transport: Transport): PodscopeClient {
  return {
    transport: transport.kind,
    async call(channel, request) {
      const reply = await transport.invoke(channel, request);
      if (!reply || typeof reply !== 'object' || !('ok' in reply))
        throw deserializeError({ code: 'Internal', message: `malformed reply on ${channel}` });
      if (reply.ok) return reply.result as never;
      throw deserializeError(reply.error);
    },
    onEvent: (listener) => transport.onEvent(listener),
  };
}
