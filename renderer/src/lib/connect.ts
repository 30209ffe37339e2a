/** Picks the transport once at start-up; the rest of the renderer never knows which one it got. */
import { createClient, type PodscopeClient } from '../../../shared/ipc/client';
import type { HostEnvironment } from '../../../shared/ipc/bridge';
import { createElectronTransport } from './electron-transport';
import { createWebSocketTransport, takeToken, webSocketUrl, type WebSocketTransport } from './ws-transport';

export interface Connection {
  client: PodscopeClient;
  environment: HostEnvironment & { mode: 'electron' | 'browser' };
  /** present in browser mode, for the connection indicator */
  socket?: WebSocketTransport;
}

export function connect(): Connection {
  if (window.podscope) {
    return {
      client: createClient(createElectronTransport(window.podscope)),
      environment: { ...window.podscope.environment, mode: 'electron' },
    };
  }
  const token = takeToken(window.location, window.sessionStorage, window.history);
  const socket = createWebSocketTransport(webSocketUrl(window.location, token));
  return { client: createClient(socket), socket, environment: { chromiumSandbox: true, runningAsRoot: false, mode: 'browser' } };
}
