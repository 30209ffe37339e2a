/**
 * The CRI streaming server: the URLs that Exec, Attach and PortForward return point here (kubelet's
 * k8s.io/kubelet pkg/cri/streaming server.go, which containerd and CRI-O embed). A request is cached under a
 * single-use token (token-cache.ts) and served at /exec/<token>, /attach/<token> or /portforward/<token> over
 * - SPDY/3.1 (`Upgrade: SPDY/3.1`, X-Stream-Protocol-Version negotiated): what crictl, kubectl ≤ 1.29 and the
 *   kubelet proxy use; remotecommand v1–v4 and portforward.k8s.io;
 * - WebSocket (`Upgrade: websocket`, subprotocol negotiated): channel.k8s.io, base64.channel.k8s.io, their v4 forms and
 *   v5.channel.k8s.io for exec/attach; v4.channel.k8s.io (+base64) for port-forward with ?port=… or the cached ports.
 * An unknown, used or expired token is 404, as kubelet.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex, Writable } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ContainerStreaming } from '../../engine/api';
import { TokenCache, type TokenCacheOptions } from './token-cache';
import { SpdyConnection } from './spdy-connection';
import { spdyRemoteCommandChannels, wsRemoteCommandChannels, type RemoteCommandChannels, type SessionOptions } from './channels';
import { servePortForwardSpdy, servePortForwardWs } from './portforward-server';
import {
  HEADER_ACCEPTED_PROTOCOL_VERSIONS,
  HEADER_PROTOCOL_VERSION,
  PORTFORWARD_PROTOCOL,
  SPDY_REMOTECOMMAND_PROTOCOLS,
  SPDY_UPGRADE,
  WS_PORTFORWARD_PROTOCOLS,
  WS_REMOTECOMMAND_PROTOCOLS,
  exitCodeStatus,
  internalErrorStatus,
  successStatus,
  type StreamStatus,
} from './protocol';

export interface ExecStreamingRequest extends SessionOptions {
  containerId: string;
  cmd: string[];
}
export type AttachStreamingRequest = SessionOptions & { containerId: string };
export interface PortForwardStreamingRequest {
  sandboxId: string;
  /** ports the request named (CRI PortForwardRequest.port); a WebSocket client may name them in ?port= instead */
  ports: number[];
}

export interface StreamingServerOptions {
  streaming: ContainerStreaming;
  /** listen address, default 127.0.0.1 */
  address?: string;
  /** default 0 (any free port) */
  port?: number;
  /** PEM cert and key: serve https/wss (kubelet's TLS config) */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** base of the returned URLs when it differs from the listen address (e.g. a proxy) */
  baseUrl?: string;
  tokens?: TokenCacheOptions;
  /** a session with no traffic either way for this long is closed (containerd's stream_idle_timeout), default 4 h */
  idleTimeoutMs?: number;
}

export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 4 * 60 * 60 * 1000;

export interface StreamingServer {
  /** base URL, e.g. http://127.0.0.1:40123 */
  readonly url: string;
  getExec(req: ExecStreamingRequest): string;
  getAttach(req: AttachStreamingRequest): string;
  getPortForward(req: PortForwardStreamingRequest): string;
  /** TCP connections open now (sessions and handshakes): 0 once every session has ended and its socket closed */
  readonly openConnections: number;
  /** stops listening and ends every session */
  close(): Promise<void>;
}

type Cached =
  | { kind: 'exec'; req: ExecStreamingRequest }
  | { kind: 'attach'; req: AttachStreamingRequest }
  | { kind: 'portforward'; req: PortForwardStreamingRequest };

export async function startStreamingServer(options: StreamingServerOptions): Promise<StreamingServer> {
  const cache = new TokenCache<Cached>(options.tokens);
  const sockets = new Set<Socket | Duplex>();
  const wss = webSocketServer();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const route = parseRoute(req.url);
    if (!route || !cache.consume(route.token)) return plain(res, 404, 'not found\n');
    // a plain request with a valid token is not a stream: kubelet answers 400 from its upgrade handshake
    plain(res, 400, 'unable to upgrade: missing upgrade headers in request\n');
  };
  const server: HttpServer = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler)
    : createHttpServer(handler);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const sessions: Sessions = { cache, wss, streaming: options.streaming, idleMs: options.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    // no bytes either way for idleMs: the session is abandoned; closing it aborts the process's session too
    (socket as Socket).setTimeout?.(sessions.idleMs, () => socket.destroy());
    void onUpgrade(sessions, req, socket, head).catch(() => socket.destroy());
  });
  server.on('clientError', (_e, socket: Duplex) => socket.destroy());

  await listen(server, options.port ?? 0, options.address ?? '127.0.0.1');
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = (options.baseUrl ?? `${options.tls ? 'https' : 'http'}://${host}:${addr.port}`).replace(/\/$/, '');

  let closing: Promise<void> | undefined;
  return {
    url,
    getExec: (req) => `${url}/exec/${cache.insert({ kind: 'exec', req })}`,
    getAttach: (req) => `${url}/attach/${cache.insert({ kind: 'attach', req })}`,
    getPortForward: (req) => `${url}/portforward/${cache.insert({ kind: 'portforward', req })}`,
    get openConnections() {
      return sockets.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const ws of wss.clients) ws.terminate();
        for (const s of sockets) s.destroy();
        wss.close();
      });
      return closing;
    },
  };
}

/** what the upgrade handlers of one server share */
interface Sessions {
  cache: TokenCache<Cached>;
  wss: WebSocketServer;
  streaming: ContainerStreaming;
  idleMs: number;
}

function webSocketServer(): WebSocketServer {
  return new WebSocketServer({
    noServer: true,
    // the client's preference order wins among what this path supports (wsstream's handshake)
    handleProtocols: (offered: Set<string>, req: IncomingMessage) => {
      const supported: readonly string[] = (req as TaggedRequest).podscopeWsProtocols ?? [];
      for (const p of offered) if (supported.includes(p)) return p;
      return false;
    },
  });
}

function listen(server: HttpServer, port: number, address: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** an upgrade request: its token consumed, then the session served over WebSocket or SPDY */
async function onUpgrade(sessions: Sessions, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const route = parseRoute(req.url);
  if (!route || (req.method !== 'GET' && req.method !== 'POST')) return rawReply(socket, 404, 'not found');
  const cached = sessions.cache.consume(route.token);
  if (!cached || cached.kind !== route.kind) return rawReply(socket, 404, 'not found');
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (upgrade === 'websocket') return onWebSocket(sessions, req, socket, head, cached, route.query);
  if (!upgrade.includes(SPDY_UPGRADE.toLowerCase())) return rawReply(socket, 400, 'unable to upgrade: missing upgrade headers in request');
  const protocol = negotiateSpdy(req, socket, cached.kind);
  if (!protocol) return;
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_UPGRADE}\r\n${HEADER_PROTOCOL_VERSION}: ${protocol}\r\n\r\n`,
  );
  const conn = new SpdyConnection(socket, 'server', head);
  conn.on('error', () => undefined);
  if (cached.kind === 'portforward') return servePortForwardSpdy(conn, sessions.streaming, cached.req.sandboxId);
  const channels = await spdyRemoteCommandChannels(conn, protocol, cached.req).catch(() => {
    conn.destroy();
    return undefined;
  });
  if (channels) await runRemoteCommand(sessions.streaming, cached, channels);
}

/**
 * The SPDY protocol version: the client's first offer this path supports; without one, the socket is answered (400
 * or 403 listing what is accepted) and undefined returned.
 */
function negotiateSpdy(req: IncomingMessage, socket: Duplex, kind: Cached['kind']): string | undefined {
  const server = kind === 'portforward' ? [PORTFORWARD_PROTOCOL] : [...SPDY_REMOTECOMMAND_PROTOCOLS];
  const offered = String(req.headers[HEADER_PROTOCOL_VERSION.toLowerCase()] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (offered.length === 0) {
    rawReply(socket, 400, `unable to upgrade: ${HEADER_PROTOCOL_VERSION} is required`);
    return undefined;
  }
  const protocol = offered.find((p) => server.includes(p));
  if (!protocol) {
    const accepted = server.map((p) => `${HEADER_ACCEPTED_PROTOCOL_VERSIONS}: ${p}\r\n`).join('');
    rawReply(
      socket,
      403,
      `unable to upgrade: unable to negotiate protocol: client supports ${offered.join(',')}, server accepts ${server.join(',')}`,
      accepted,
    );
  }
  return protocol;
}

function onWebSocket(sessions: Sessions, req: IncomingMessage, socket: Duplex, head: Buffer, cached: Cached, query: URLSearchParams): void {
  const supported = cached.kind === 'portforward' ? WS_PORTFORWARD_PROTOCOLS : WS_REMOTECOMMAND_PROTOCOLS;
  (req as TaggedRequest).podscopeWsProtocols = supported;
  // wsstream refuses the handshake when the client offers subprotocols and none is supported (no offer at all
  // means the binary v1 protocol); the session must not start for a client that will not understand it
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (offered.length > 0 && !offered.some((p) => (supported as readonly string[]).includes(p))) {
    return rawReply(socket, 400, `requested protocol(s) are not supported: ${offered.join(', ')}; supports ${supported.join(', ')}`);
  }
  let ports: number[] = [];
  if (cached.kind === 'portforward') {
    const parsed = parsePorts(query.getAll('port'));
    if (parsed instanceof Error) return rawReply(socket, 400, parsed.message);
    ports = parsed.length > 0 ? parsed : cached.req.ports;
    if (ports.length === 0) return rawReply(socket, 400, 'query parameter "port" is required');
  }
  sessions.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    // ws clears the socket's timeout when it takes the socket over: set the idle limit again
    (socket as Socket).setTimeout?.(sessions.idleMs, () => socket.destroy());
    if (cached.kind === 'portforward') void servePortForwardWs(ws, ws.protocol, sessions.streaming, cached.req.sandboxId, ports);
    else void runRemoteCommand(sessions.streaming, cached, wsRemoteCommandChannels(ws, ws.protocol, cached.req));
  });
}

async function runRemoteCommand(
  streaming: ContainerStreaming,
  cached: Exclude<Cached, { kind: 'portforward' }>,
  ch: RemoteCommandChannels,
): Promise<void> {
  let status: StreamStatus;
  const io = {
    stdin: ch.stdin,
    stdout: ch.stdout,
    stderr: ch.stderr,
    tty: cached.req.tty,
    resize: ch.resize,
    signal: ch.signal,
  } as const;
  try {
    if (cached.kind === 'exec') {
      const { exitCode } = await streaming.exec({ ...io, containerId: cached.req.containerId, cmd: cached.req.cmd });
      status = exitCode === 0 ? successStatus() : exitCodeStatus(exitCode, cached.req.cmd);
    } else {
      await streaming.attach({ ...io, containerId: cached.req.containerId });
      status = successStatus();
    }
  } catch (e) {
    status = internalErrorStatus(`error executing command in container: ${e instanceof Error ? e.message : String(e)}`);
  }
  // what the process wrote may still sit in the sinks behind a slow reader: the status ends the session on the
  // client's side, so it goes only after every byte before it
  await Promise.all([flushed(ch.stdout), flushed(ch.stderr)]);
  await ch.writeStatus(status).catch(() => undefined);
  await ch.close().catch(() => undefined);
}

interface TaggedRequest extends IncomingMessage {
  podscopeWsProtocols?: readonly string[];
}

const ROUTE = /^\/(exec|attach|portforward)\/([A-Za-z0-9_-]+)$/;

function parseRoute(rawUrl: string | undefined): { kind: Cached['kind']; token: string; query: URLSearchParams } | undefined {
  if (!rawUrl) return undefined;
  let u: URL;
  try {
    u = new URL(rawUrl, 'http://streaming.invalid');
  } catch {
    return undefined;
  }
  const m = ROUTE.exec(u.pathname);
  if (!m) return undefined;
  return { kind: m[1] as Cached['kind'], token: m[2]!, query: u.searchParams };
}

/** kubelet's NewV4Options: each ?port= is a comma-separated list of 1..65535 */
export function parsePorts(values: string[]): number[] | Error {
  const ports: number[] = [];
  for (const v of values) {
    if (v === '') return new Error('query parameter "port" cannot be empty');
    for (const p of v.split(',')) {
      const n = Number(p);
      if (!/^\d+$/.test(p) || n > 65535) return new Error(`unable to parse "${v}" as a port`);
      if (n < 1) return new Error(`port "${v}" must be > 0`);
      ports.push(n);
    }
  }
  return ports;
}

function plain(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function rawReply(socket: Duplex, code: number, text: string, extraHeaders = ''): void {
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found' }[code as 400 | 403 | 404] ?? 'Error';
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${code} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}Connection: close\r\n\r\n${body}`,
  );
}

/** resolves once every write to `w` has been handed on (its 'finish'), or at once when it is gone */
function flushed(w: Writable | null): Promise<void> {
  if (!w || w.writableFinished || w.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    w.once('finish', resolve);
    w.once('close', resolve);
    if (!w.writableEnded) w.end();
  });
}
