/**
 * Browser mode: the renderer and the IPC router served to a normal browser. HTTP on 127.0.0.1 serves the Vite
 * build; a WebSocket at /ipc carries the same channel map as Electron IPC, through the same router.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AppCore } from '../core/app-core';
import { trustOrigins } from '../ipc/sender';
import { TOKEN_PARAM, WS_PATH, type ClientFrame, type ServerFrame } from '../../shared/ipc/wire';
import { authorize, newToken, staticCookie, staticCookieName, type AuthContext } from './auth';
import { contentSecurityPolicy, plain, securityHeaders, serveStatic } from './static-files';

export interface BrowserHostOptions {
  /** what the host serves: its router is made from the core (see electron/core/app-core.ts) */
  core: Pick<AppCore, 'createRouter'>;
  /** 0 (default) picks a free port */
  port?: number;
  /** the Vite build output; default dist/renderer next to the package root */
  rendererDir?: string;
  /** fixed token (tests); default a fresh random one per run */
  token?: string;
}

export interface BrowserHost {
  /** the URL to open, token included */
  url: string;
  token: string;
  port: number;
  close(): Promise<void>;
}

/**
 * dist/renderer of the package: this file sits two levels below the package root both as source
 * (electron/host/) and bundled (dist/cli/), so the same relative URL finds it; PODSCOPE_RENDERER_DIR overrides.
 */
export const DEFAULT_RENDERER_DIR = process.env.PODSCOPE_RENDERER_DIR ?? fileURLToPath(new URL('../../dist/renderer', import.meta.url));
/** large enough for a trace-heavy status, small enough to refuse abuse */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

export async function startBrowserHost(opts: BrowserHostOptions): Promise<BrowserHost> {
  const token = opts.token ?? newToken();
  const rendererDir = opts.rendererDir ?? DEFAULT_RENDERER_DIR;
  const ctx: AuthContext = { token, allowedOrigins: [], allowedHosts: [], cookieName: '' };
  // The socket was authenticated at upgrade; the router still refuses anything not marked so.
  const router = opts.core.createRouter(
    (s) => s.transport === 'websocket' && s.authenticated === true && trustOrigins(ctx.allowedOrigins)(s),
  );
  let headers: Record<string, string> = {};

  const server = createServer((req, res) => {
    try {
      const verdict = authorize(req, ctx, { cookie: true });
      if (!verdict.ok) return plain(res, verdict.status, `podscope: ${verdict.reason}`, headers);
      if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed', headers);
      const extra: Record<string, string> = verdict.via === 'query' ? { 'Set-Cookie': staticCookie(ctx) } : {};
      void serveStatic(rendererDir, verdict.url.pathname, res, { ...headers, ...extra }).catch(() =>
        plain(res, 500, 'internal error', headers),
      );
    } catch {
      // the engine lives in this process: a request handler must never take it down
      if (!res.headersSent) plain(res, 500, 'internal error', headers);
    }
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    socket.on('error', () => socket.destroy());
    // the engine's API: the token itself, never the cookie
    const verdict = authorize(req, ctx, { cookie: false });
    if (!verdict.ok || verdict.url.pathname !== WS_PATH) {
      const status = !verdict.ok ? verdict.status : 404;
      const text = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status];
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, req));
  });

  function serveSocket(ws: WebSocket, req: IncomingMessage) {
    // A client without an Origin header (a script, the CLI) is treated as coming from this host itself.
    const origin = req.headers.origin ?? ctx.allowedOrigins[0]!;
    const send = (f: ServerFrame) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(f));
    };
    // this socket owns the sessions it opens: they end when it closes (tab closed, reloaded, network gone)
    const connectionId = `ws-${randomUUID()}`;
    const unsubscribe = router.subscribe((event, target) => {
      if (target === undefined || target === connectionId) send({ t: 'event', event });
    });
    ws.on('close', () => {
      unsubscribe();
      void router.closeConnection(connectionId);
    });
    // ws reports an oversized or invalid frame as an 'error' event; unhandled, it would end the whole process
    ws.on('error', () => ws.terminate());
    ws.on('message', (data, isBinary) => {
      if (isBinary) return ws.close(1003, 'text frames only');
      let frame: ClientFrame;
      try {
        frame = JSON.parse(data.toString()) as ClientFrame;
      } catch {
        return ws.close(1007, 'invalid JSON');
      }
      if (frame?.t !== 'req' || typeof frame.id !== 'number') return ws.close(1008, 'unexpected frame');
      void router
        .handle(frame.channel, frame.payload, { transport: 'websocket', url: origin, authenticated: true, connectionId })
        .then((reply) => send({ t: 'res', id: frame.id, reply }))
        .catch(() =>
          send({ t: 'res', id: frame.id, reply: { ok: false, error: { code: 'Internal', message: 'the reply could not be encoded' } } }),
        );
    });
    send({ t: 'hello', version: '1' });
  }

  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolvePromise());
  });
  const port = (server.address() as AddressInfo).port;
  ctx.allowedOrigins.push(`http://127.0.0.1:${port}`, `http://localhost:${port}`);
  ctx.allowedHosts.push(`127.0.0.1:${port}`, `localhost:${port}`);
  ctx.cookieName = staticCookieName(port);
  headers = securityHeaders(contentSecurityPolicy(`ws://127.0.0.1:${port} ws://localhost:${port}`));

  return {
    url: `http://127.0.0.1:${port}/?${TOKEN_PARAM}=${encodeURIComponent(token)}`,
    token,
    port,
    async close() {
      router.dispose();
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
