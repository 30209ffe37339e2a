/**
 * The server side of one remotecommand session, whatever carries it (SPDY streams or WebSocket channels): the
 * process's stdio as Node streams, terminal resizes, and the error stream for the final status.
 */
import { PassThrough, Writable, type Readable } from 'node:stream';
import type { ResizeSource, TerminalSize } from '../../engine/api';
import type WebSocket from 'ws';
import type { SpdyConnection, SpdyStream } from './spdy-connection';
import {
  CHANNEL_CLOSE,
  CHANNEL_ERROR,
  CHANNEL_RESIZE,
  CHANNEL_STDERR,
  CHANNEL_STDIN,
  CHANNEL_STDOUT,
  HEADER_STREAM_TYPE,
  REMOTECOMMAND_V3,
  REMOTECOMMAND_V4,
  ResizeDecoder,
  WS_V4_BASE64_CHANNEL,
  WS_V4_CHANNEL,
  WS_V5_CHANNEL,
  statusText,
  type StreamStatus,
} from './protocol';

export interface SessionOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface RemoteCommandChannels {
  stdin: Readable | null;
  stdout: Writable | null;
  stderr: Writable | null;
  resize?: ResizeSource;
  /** aborted when the client goes away */
  signal: AbortSignal;
  writeStatus(status: StreamStatus): Promise<void>;
  /** ends every stream and the connection */
  close(): Promise<void>;
}

class Resizes implements ResizeSource {
  private readonly listeners = new Set<(s: TerminalSize) => void>();
  private last: TerminalSize | undefined;
  readonly decoder = new ResizeDecoder((size) => {
    this.last = size;
    for (const l of this.listeners) l(size);
  });
  subscribe(listener: (size: TerminalSize) => void): () => void {
    this.listeners.add(listener);
    // a size that arrived before the runtime subscribed (clients send one right away) is not lost
    if (this.last) listener(this.last);
    return () => this.listeners.delete(listener);
  }
}

/** a Writable that forwards to `send` and ignores end(): the session, not the runtime, closes the channel */
function sink(send: (chunk: Buffer) => Promise<void>): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      send(chunk).then(
        () => cb(),
        () => cb(),
      );
    },
  });
}

// ---------------------------------------------------------------------------------------------------------------- SPDY

const STREAM_CREATION_TIMEOUT_MS = 30_000;

/**
 * Waits for the streams the client must open for this session (kubelet's createHTTPStreamStreams: error, plus stdin,
 * stdout, stderr as requested, plus resize with tty from v3 on) and wires them up.
 */
export function spdyRemoteCommandChannels(conn: SpdyConnection, protocol: string, opts: SessionOptions): Promise<RemoteCommandChannels> {
  const resizing = protocol === REMOTECOMMAND_V4 || protocol === REMOTECOMMAND_V3;
  const expected = 1 + Number(opts.stdin) + Number(opts.stdout) + Number(opts.stderr) + Number(opts.tty && resizing);
  const byType = new Map<string, SpdyStream>();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error('timed out waiting for client to create streams'));
    }, STREAM_CREATION_TIMEOUT_MS);
    const onClose = () => {
      cleanup();
      reject(new Error('connection closed before the streams were created'));
    };
    const onStream = (stream: SpdyStream) => {
      const type = stream.header(HEADER_STREAM_TYPE) ?? '';
      if (!['error', 'stdin', 'stdout', 'stderr', 'resize'].includes(type) || (type === 'resize' && !resizing)) {
        // kubelet logs and ignores an unexpected stream type
        stream.reset();
        return;
      }
      byType.set(type, stream);
      if (byType.size === expected) {
        cleanup();
        resolve(build());
      }
    };
    const cleanup = () => {
      clearTimeout(timer);
      conn.off('stream', onStream);
      conn.off('close', onClose);
    };
    conn.on('stream', onStream);
    conn.on('close', onClose);

    const build = (): RemoteCommandChannels => {
      const ac = new AbortController();
      conn.once('close', () => ac.abort());
      const errorStream = byType.get('error');
      const stdinStream = byType.get('stdin');
      const outStream = byType.get('stdout');
      const errStream = byType.get('stderr');
      const resizeStream = byType.get('resize');
      // streams opened beyond what the request asked for are not connected to the process
      let stdin: PassThrough | null = null;
      if (opts.stdin && stdinStream) {
        stdin = new PassThrough();
        stdinStream.pipe(stdin);
      }
      let resize: Resizes | undefined;
      if (opts.tty && resizeStream) {
        resize = new Resizes();
        const r = resize;
        resizeStream.on('data', (c: Buffer) => r.decoder.push(c));
      }
      const send = (s: SpdyStream | undefined) => (chunk: Buffer) =>
        s && !s.writableEnded ? new Promise<void>((res) => s.write(chunk, () => res())) : Promise.resolve();
      for (const s of [outStream, errStream, errorStream, resizeStream, stdinStream]) s?.on('error', () => undefined);
      return {
        stdin,
        stdout: opts.stdout && outStream ? sink(send(outStream)) : null,
        stderr: opts.stderr && errStream ? sink(send(errStream)) : null,
        resize,
        signal: ac.signal,
        async writeStatus(status) {
          // v4 carries the metav1.Status as JSON; v1–v3 only the text of a failure
          const body = protocol === REMOTECOMMAND_V4 ? JSON.stringify(status) : statusText(status);
          if (body !== '') await send(errorStream)(Buffer.from(body));
        },
        async close() {
          const ends = [outStream, errStream, errorStream].map(
            (s) => new Promise<void>((res) => (s && !s.writableEnded && !s.destroyed ? s.end(() => res()) : res())),
          );
          await Promise.all(ends);
          await conn.close();
        },
      };
    };
  });
}

// ----------------------------------------------------------------------------------------------------------- WebSocket

/** One WebSocket carrying channel-prefixed messages (wsstream): binary with a channel byte, or base64 text with '0'+n. */
export class WsChannels {
  readonly base64: boolean;
  private readonly handlers = new Map<number, (data: Buffer) => void>();
  private closeHandler: ((channel: number) => void) | undefined;

  constructor(
    readonly ws: WebSocket,
    readonly protocol: string,
  ) {
    this.base64 = protocol.includes('base64');
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (buf.length === 0) return;
      let channel = buf.readUInt8(0);
      let payload = buf.subarray(1);
      if (this.base64 && !isBinary) {
        channel -= 48;
        payload = Buffer.from(payload.toString('latin1'), 'base64');
      }
      if (channel === CHANNEL_CLOSE - (this.base64 && !isBinary ? 48 : 0) && payload.length > 0) {
        this.closeHandler?.(payload.readUInt8(0));
        return;
      }
      this.handlers.get(channel)?.(payload);
    });
  }

  on(channel: number, handler: (data: Buffer) => void): void {
    this.handlers.set(channel, handler);
  }

  /** v5's close signal: [255, channel] */
  onChannelClose(handler: (channel: number) => void): void {
    this.closeHandler = handler;
  }

  send(channel: number, data: Buffer): Promise<void> {
    if (this.ws.readyState !== this.ws.OPEN) return Promise.resolve();
    const frame = this.base64 ? String.fromCharCode(48 + channel) + data.toString('base64') : Buffer.concat([Buffer.from([channel]), data]);
    return new Promise<void>((resolve) => this.ws.send(frame, { binary: !this.base64 }, () => resolve()));
  }
}

export function wsRemoteCommandChannels(ws: WebSocket, protocol: string, opts: SessionOptions): RemoteCommandChannels {
  const ch = new WsChannels(ws, protocol);
  const ac = new AbortController();
  let stdin: PassThrough | null = null;
  if (opts.stdin) {
    const s = new PassThrough();
    stdin = s;
    ch.on(CHANNEL_STDIN, (d) => {
      if (!s.writableEnded) s.write(d);
    });
    ch.onChannelClose((n) => {
      if (n === CHANNEL_STDIN && protocol === WS_V5_CHANNEL) s.end();
    });
  }
  let resize: Resizes | undefined;
  if (opts.tty) {
    const r = new Resizes();
    resize = r;
    ch.on(CHANNEL_RESIZE, (d) => r.decoder.push(d));
  }
  ws.on('close', () => {
    stdin?.end();
    ac.abort();
  });
  ws.on('error', () => undefined);
  // kubelet writes an empty message on the lowest writable channel so the client knows the session is open
  void ch.send(opts.stdout ? CHANNEL_STDOUT : opts.stderr ? CHANNEL_STDERR : CHANNEL_ERROR, Buffer.alloc(0));
  const v4 = protocol === WS_V4_CHANNEL || protocol === WS_V4_BASE64_CHANNEL || protocol === WS_V5_CHANNEL;
  return {
    stdin,
    stdout: opts.stdout ? sink((c) => ch.send(CHANNEL_STDOUT, c)) : null,
    stderr: opts.stderr ? sink((c) => ch.send(CHANNEL_STDERR, c)) : null,
    resize,
    signal: ac.signal,
    async writeStatus(status) {
      const body = v4 ? JSON.stringify(status) : statusText(status);
      if (body !== '') await ch.send(CHANNEL_ERROR, Buffer.from(body));
    },
    async close() {
      if (ws.readyState === ws.OPEN) ws.close(1000);
    },
  };
}
