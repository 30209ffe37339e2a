/**
 * Browser-mode transport: one WebSocket to the host, requests matched to replies by id, events fanned out.
 * It reconnects with backoff; requests made while disconnected wait for the socket rather than fail at once,
 * and requests in flight when it drops fail with Unavailable (they may or may not have run on the host).
 */
import type { ChannelName } from '../../../shared/ipc/channels';
import type { Transport } from '../../../shared/ipc/client';
import type { PushedEvent } from '../../../shared/ipc/events';
import { TOKEN_PARAM, WS_PATH, type Reply, type ServerFrame } from '../../../shared/ipc/wire';

export type ConnectionState = 'connecting' | 'open' | 'closed';

export interface WebSocketTransport extends Transport {
  state(): ConnectionState;
  onState(listener: (s: ConnectionState) => void): () => void;
}

export function createWebSocketTransport(url: string): WebSocketTransport {
  let ws: WebSocket | undefined;
  let state: ConnectionState = 'connecting';
  let nextId = 1;
  let retry = 0;
  const pending = new Map<number, (r: Reply) => void>();
  const queue: string[] = [];
  const listeners = new Set<(e: PushedEvent) => void>();
  const stateListeners = new Set<(s: ConnectionState) => void>();
  const setState = (s: ConnectionState) => {
    state = s;
    for (const l of stateListeners) l(s);
  };

  function connect() {
    setState('connecting');
    ws = new WebSocket(url);
    ws.onopen = () => {
      retry = 0;
      setState('open');
      while (queue.length) ws!.send(queue.shift()!);
    };
    ws.onmessage = (m) => {
      const frame = JSON.parse(String(m.data)) as ServerFrame;
      if (frame.t === 'res') {
        pending.get(frame.id)?.(frame.reply);
        pending.delete(frame.id);
      } else if (frame.t === 'event') {
        for (const l of listeners) l(frame.event);
      }
    };
    ws.onclose = () => {
      for (const [id, resolve] of pending) {
        resolve({
          ok: false,
          error: { code: 'Unavailable', message: 'connection to the Podscope host was lost; the request may or may not have completed' },
        });
        pending.delete(id);
      }
      setState('closed');
      setTimeout(connect, Math.min(5000, 250 * 2 ** retry++));
    };
  }
  connect();

  return {
    kind: 'websocket',
    state: () => state,
    onState(l) {
      stateListeners.add(l);
      return () => stateListeners.delete(l);
    },
    invoke(channel: ChannelName, payload: unknown) {
      const id = nextId++;
      const text = JSON.stringify({ t: 'req', id, channel, payload });
      return new Promise<Reply>((resolve) => {
        pending.set(id, resolve);
        if (ws?.readyState === WebSocket.OPEN) ws.send(text);
        else queue.push(text);
      });
    },
    onEvent(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
}

/**
 * The token arrives once in the page URL. Keep it for this tab (sessionStorage) and remove it from the address
 * bar so it does not end up in screenshots, history or bug reports; the HttpOnly cookie covers reloads.
 */
export function takeToken(loc: Location, storage: Storage, history: History): string | undefined {
  const params = new URLSearchParams(loc.search);
  const fromUrl = params.get(TOKEN_PARAM);
  if (fromUrl) {
    storage.setItem('podscope.token', fromUrl);
    params.delete(TOKEN_PARAM);
    const rest = params.toString();
    history.replaceState(null, '', `${loc.pathname}${rest ? `?${rest}` : ''}${loc.hash}`);
    return fromUrl;
  }
  return storage.getItem('podscope.token') ?? undefined;
}

export function webSocketUrl(loc: Location, token: string | undefined): string {
  const proto = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${loc.host}${WS_PATH}${token ? `?${TOKEN_PARAM}=${encodeURIComponent(token)}` : ''}`;
}
