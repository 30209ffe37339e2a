/**
 * The client of a CRI streaming URL (what Exec/Attach/PortForward return): runs the session over SPDY/3.1, as crictl
 * 1.26 and client-go do (containerd 1.6's streaming server speaks only SPDY), or over WebSocket.
 * remotecommand: offers v4, v3, v2, v1 and reads the exit code from the v4 error stream; opens the error stream
 * first, then stdin, stdout, stderr (not with tty) and resize (tty), as client-go does.
 * portforward: one connection per forwarded TCP connection (error stream, then data stream, requestID 0).
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex, Readable, Writable } from 'node:stream';
import WebSocket from 'ws';
import { PodscopeError } from '../../../shared/domain/errors';
import type { StreamIO } from '../../engine/api';
import { SpdyConnection, type SpdyStream } from './spdy-connection';
import {
  CHANNEL_CLOSE,
  CHANNEL_ERROR,
  CHANNEL_RESIZE,
  CHANNEL_STDERR,
  CHANNEL_STDIN,
  CHANNEL_STDOUT,
  HEADER_PORT,
  HEADER_PROTOCOL_VERSION,
  HEADER_REQUEST_ID,
  HEADER_STREAM_TYPE,
  PORTFORWARD_PROTOCOL,
  REMOTECOMMAND_V3,
  REMOTECOMMAND_V4,
  SPDY_REMOTECOMMAND_PROTOCOLS,
  SPDY_UPGRADE,
  WS_CHANNEL,
  WS_V4_CHANNEL,
  WS_V5_CHANNEL,
  encodeResize,
  outcomeOfLegacy,
  outcomeOfV4,
  type SessionOutcome,
} from './protocol';

export type StreamingTransport = 'spdy' | 'websocket';

export interface StreamingClientOptions {
  /** default 'spdy' */
  transport?: StreamingTransport;
  /** for https URLs: CA to trust, or false to accept any certificate (a runtime's self-signed one) */
  ca?: string | Buffer;
  rejectUnauthorized?: boolean;
  /** remotecommand versions offered over SPDY, preferred first (default v4, v3, v2, v1) */
  protocols?: string[];
}

export type RemoteCommandIO = StreamIO;

/** Runs exec or attach at `url`; resolves with the exit code (0 for attach), rejects when the session fails. */
export async function runRemoteCommand(
  url: string,
  io: RemoteCommandIO,
  options: StreamingClientOptions = {},
): Promise<{ exitCode: number }> {
  const outcome = options.transport === 'websocket' ? await remoteCommandWs(url, io, options) : await remoteCommandSpdy(url, io, options);
  if ('error' in outcome) throw new PodscopeError('RuntimeError', outcome.error);
  return outcome;
}

/** Forwards one connection (`stream`) to `port` through the portforward URL; resolves when both sides are done. */
export async function runPortForward(
  url: string,
  port: number,
  stream: Duplex,
  options: StreamingClientOptions & { signal?: AbortSignal } = {},
): Promise<void> {
  if (options.transport === 'websocket') return portForwardWs(url, port, stream, options);
  const { conn } = await upgradeSpdy(url, [PORTFORWARD_PROTOCOL], options);
  const abort = () => conn.destroy();
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    const headers = (type: string) => ({ [HEADER_STREAM_TYPE]: [type], [HEADER_PORT]: [String(port)], [HEADER_REQUEST_ID]: ['0'] });
    // client-go: the error stream is read-only for the client, so its write side is closed at once
    const errorStream = await conn.createStream(headers('error'), { fin: true });
    const data = await conn.createStream(headers('data'));
    const errorText = collect(errorStream);
    data.on('error', () => undefined);
    stream.on('error', () => data.reset());
    stream.pipe(data);
    data.pipe(stream);
    await Promise.all([ended(data), errorText.then(() => undefined)]);
    const text = await errorText;
    if (text !== '') throw new PodscopeError('RuntimeError', text);
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await conn.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------------------------- SPDY

async function upgradeSpdy(
  url: string,
  protocols: string[],
  options: StreamingClientOptions,
): Promise<{ conn: SpdyConnection; protocol: string }> {
  const u = new URL(url);
  const req: ClientRequest = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, {
    method: 'POST',
    headers: { Connection: 'Upgrade', Upgrade: SPDY_UPGRADE, [HEADER_PROTOCOL_VERSION]: protocols },
    ...(u.protocol === 'https:' && { ca: options.ca, rejectUnauthorized: options.rejectUnauthorized ?? true }),
  });
  return new Promise((resolve, reject) => {
    req.on('error', (e) => reject(new PodscopeError('Unavailable', `streaming server ${u.host}: ${e.message}`)));
    req.on('response', (res: IncomingMessage) => {
      // not upgraded: the body says why (404 for an unknown or used token, 403 when no protocol matched)
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body = (body + c).slice(0, 4096)));
      res.on('end', () => {
        const code =
          res.statusCode === 404 ? 'NotFound' : res.statusCode === 403 || res.statusCode === 400 ? 'FailedPrecondition' : 'RuntimeError';
        reject(new PodscopeError(code, `streaming server answered ${res.statusCode}: ${body.trim()}`));
      });
    });
    req.on('upgrade', (res: IncomingMessage, socket, head: Buffer) => {
      const protocol = String(res.headers[HEADER_PROTOCOL_VERSION.toLowerCase()] ?? '');
      if (
        !String(res.headers.upgrade ?? '')
          .toLowerCase()
          .includes(SPDY_UPGRADE.toLowerCase())
      ) {
        socket.destroy();
        return reject(
          new PodscopeError('RuntimeError', `streaming server upgraded to ${String(res.headers.upgrade)}, not ${SPDY_UPGRADE}`),
        );
      }
      const conn = new SpdyConnection(socket, 'client', head);
      conn.on('error', () => undefined);
      resolve({ conn, protocol });
    });
    req.end();
  });
}

async function remoteCommandSpdy(url: string, io: RemoteCommandIO, options: StreamingClientOptions): Promise<SessionOutcome> {
  const { conn, protocol } = await upgradeSpdy(url, options.protocols ?? [...SPDY_REMOTECOMMAND_PROTOCOLS], options);
  const cleanups: (() => void)[] = [];
  const abort = () => conn.destroy();
  io.signal?.addEventListener('abort', abort, { once: true });
  try {
    const open = (type: string) => conn.createStream({ [HEADER_STREAM_TYPE]: [type] });
    const errorStream = await open('error');
    const errorText = collect(errorStream);
    const stdinStream = io.stdin ? await open('stdin') : undefined;
    const stdoutStream = io.stdout ? await open('stdout') : undefined;
    const stderrStream = io.stderr && !io.tty ? await open('stderr') : undefined;
    const resizing = io.tty && io.resize && (protocol === REMOTECOMMAND_V4 || protocol === REMOTECOMMAND_V3);
    const resizeStream = resizing ? await open('resize') : undefined;
    if (resizeStream && io.resize) {
      cleanups.push(io.resize.subscribe((size) => resizeStream.write(encodeResize(size))));
    }
    if (stdinStream && io.stdin) cleanups.push(feed(io.stdin, stdinStream));
    const outputs = [copyOut(stdoutStream, io.stdout), copyOut(stderrStream, io.stderr)];
    const text = await errorText;
    await Promise.all(outputs);
    if (conn.isClosed && text === '' && io.signal?.aborted) return { error: 'session aborted' };
    return protocol === REMOTECOMMAND_V4 ? outcomeOfV4(text) : outcomeOfLegacy(text);
  } finally {
    for (const c of cleanups) c();
    io.signal?.removeEventListener('abort', abort);
    await conn.close().catch(() => undefined);
  }
}

/** pipes `from` into a SPDY stream without taking ownership of `from` (process.stdin stays usable afterwards) */
function feed(from: Readable, to: SpdyStream): () => void {
  const onData = (c: Buffer | string) => {
    if (!to.writableEnded) to.write(c);
  };
  const onEnd = () => {
    if (!to.writableEnded) to.end();
  };
  from.on('data', onData);
  from.once('end', onEnd);
  to.on('error', () => undefined);
  return () => {
    from.off('data', onData);
    from.off('end', onEnd);
  };
}

/**
 * Copies a stream's output into the caller's Writable with backpressure (a slow terminal or file holds the SPDY
 * stream back, which stops the socket: spdy-connection.ts), and resolves once every byte has been written out.
 */
function copyOut(from: SpdyStream | undefined, to: Writable | null): Promise<void> {
  if (!from || !to) return Promise.resolve();
  const writes = new WriteTracker(
    to,
    () => from.pause(),
    () => from.resume(),
  );
  from.on('data', (c: Buffer) => writes.write(c));
  return ended(from).then(() => writes.flushed());
}

/** counts writes still in flight to a Writable and pauses the source while it asks for it */
class WriteTracker {
  private pending = 0;
  private idle: (() => void)[] = [];
  constructor(
    private readonly to: Writable,
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}
  write(chunk: Buffer): void {
    this.pending++;
    const ok = this.to.write(chunk, () => {
      if (--this.pending === 0) for (const f of this.idle.splice(0)) f();
    });
    if (!ok) {
      this.pause();
      this.to.once('drain', this.resume);
    }
  }
  flushed(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }
}

function ended(s: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (s.readableEnded) return resolve();
    s.once('end', resolve);
    s.once('close', resolve);
  });
}

function collect(s: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  s.on('data', (c: Buffer) => {
    // the error stream holds one Status; more than this is not a Status and is cut
    if (chunks.reduce((n, b) => n + b.length, 0) < 1 << 20) chunks.push(c);
  });
  s.on('error', () => undefined);
  return ended(s).then(() => Buffer.concat(chunks).toString('utf8'));
}

// ----------------------------------------------------------------------------------------------------------- WebSocket

const wsUrl = (url: string) => url.replace(/^http/, 'ws');

/** `onMessage` is attached before the handshake completes: the server's first messages can arrive with the 101 */
function openWs(
  url: string,
  protocols: string[],
  options: StreamingClientOptions,
  onMessage: (data: Buffer, isBinary: boolean) => void,
): Promise<WebSocket> {
  const ws = new WebSocket(wsUrl(url), protocols, {
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.rejectUnauthorized !== undefined && { rejectUnauthorized: options.rejectUnauthorized }),
  });
  ws.on('message', onMessage);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      const code = res.statusCode === 404 ? 'NotFound' : 'FailedPrecondition';
      reject(new PodscopeError(code, `streaming server answered ${res.statusCode}`));
      ws.terminate();
    });
    ws.once('error', (e) => reject(new PodscopeError('Unavailable', `streaming server: ${e.message}`)));
  });
}

const frame = (channel: number, data: Buffer | string) => Buffer.concat([Buffer.from([channel]), Buffer.from(data)]);

async function remoteCommandWs(url: string, io: RemoteCommandIO, options: StreamingClientOptions): Promise<SessionOutcome> {
  const errorChunks: Buffer[] = [];
  // the socket is paused while stdout or stderr asks for it (ws.pause), and the session ends once both are written
  const opened: { ws?: WebSocket } = {};
  const pause = () => opened.ws?.pause();
  const resume = () => opened.ws?.resume();
  const outWrites = io.stdout ? new WriteTracker(io.stdout, pause, resume) : undefined;
  const errWrites = io.stderr ? new WriteTracker(io.stderr, pause, resume) : undefined;
  const ws = await openWs(url, [WS_V5_CHANNEL, WS_V4_CHANNEL, WS_CHANNEL], options, (data, isBinary) => {
    if (!isBinary || data.length === 0) return;
    const payload = data.subarray(1);
    switch (data.readUInt8(0)) {
      case CHANNEL_STDOUT:
        if (payload.length > 0) outWrites?.write(payload);
        break;
      case CHANNEL_STDERR:
        if (payload.length > 0) errWrites?.write(payload);
        break;
      case CHANNEL_ERROR:
        errorChunks.push(payload);
        break;
    }
  });
  opened.ws = ws;
  const protocol = ws.protocol;
  const cleanups: (() => void)[] = [];
  const abort = () => ws.terminate();
  io.signal?.addEventListener('abort', abort, { once: true });
  try {
    await new Promise<void>((resolve) => {
      ws.on('close', () => resolve());
      ws.on('error', () => resolve());
      const send = (d: Buffer) => {
        if (ws.readyState === ws.OPEN) ws.send(d);
      };
      if (io.stdin) {
        const stdin = io.stdin;
        const onData = (c: Buffer | string) => send(frame(CHANNEL_STDIN, c));
        // only v5 can say "stdin ended"; older protocols leave the process's stdin open until the session ends
        const onEnd = () => {
          if (protocol === WS_V5_CHANNEL) send(Buffer.from([CHANNEL_CLOSE, CHANNEL_STDIN]));
        };
        stdin.on('data', onData);
        stdin.once('end', onEnd);
        cleanups.push(() => {
          stdin.off('data', onData);
          stdin.off('end', onEnd);
        });
      }
      if (io.tty && io.resize) cleanups.push(io.resize.subscribe((size) => send(frame(CHANNEL_RESIZE, encodeResize(size)))));
    });
    await Promise.all([outWrites?.flushed(), errWrites?.flushed()]);
    const text = Buffer.concat(errorChunks).toString('utf8');
    if (text === '' && io.signal?.aborted) return { error: 'session aborted' };
    return protocol === WS_CHANNEL ? outcomeOfLegacy(text) : outcomeOfV4(text);
  } finally {
    for (const c of cleanups) c();
    io.signal?.removeEventListener('abort', abort);
  }
}

async function portForwardWs(
  url: string,
  port: number,
  stream: Duplex,
  options: StreamingClientOptions & { signal?: AbortSignal },
): Promise<void> {
  const u = new URL(url);
  u.searchParams.set('port', String(port));
  // the first message on each channel starts with the port (2 bytes, little endian): it is not payload
  const seenPrefix = [false, false];
  const errorChunks: Buffer[] = [];
  const ws = await openWs(u.toString(), [WS_V4_CHANNEL], options, (data) => {
    if (data.length === 0) return;
    const channel = data.readUInt8(0);
    let payload = data.subarray(1);
    if (channel > 1) return;
    if (!seenPrefix[channel]) {
      seenPrefix[channel] = true;
      payload = payload.subarray(2);
    }
    if (payload.length === 0) return;
    if (channel === 0) stream.write(payload);
    else errorChunks.push(payload);
  });
  const abort = () => ws.terminate();
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    await new Promise<void>((resolve) => {
      ws.on('close', () => resolve());
      ws.on('error', () => resolve());
      stream.on('data', (c: Buffer) => {
        if (ws.readyState === ws.OPEN) ws.send(frame(0, c));
      });
      // the v4 channel protocol has no half-close: the local side ending ends the session
      stream.once('end', () => ws.close(1000));
      stream.on('error', () => ws.terminate());
    });
    if (!stream.writableEnded) stream.end();
    const text = Buffer.concat(errorChunks).toString('utf8');
    if (text !== '') throw new PodscopeError('RuntimeError', text);
  } finally {
    options.signal?.removeEventListener('abort', abort);
  }
}
