/**
 * A SPDY/3.1 connection over an upgraded HTTP/1.1 socket, with the behaviour Go's spdystream peers rely on:
 * - the client opens streams (odd ids, increasing); the server answers each SYN_STREAM with a SYN_REPLY before any
 *   DATA on it (apimachinery's connection replies as soon as its handler has taken the stream);
 * - a stream is half-closed by a DATA (or SYN) frame with FIN; RST_STREAM tears it down;
 * - PINGs from the peer are echoed; GOAWAY stops new streams;
 * - no flow control: spdystream neither sends nor honours WINDOW_UPDATE, so none is sent and received ones are ignored
 *   (see spdy-frames.ts for why this is also why spdy-transport is not used).
 */
import { Duplex } from 'node:stream';
import { EventEmitter } from 'node:events';
import { FrameDecoder, FrameEncoder, RstStatus, SpdyProtocolError, type SpdyFrame, type SpdyHeaders } from './spdy-frames';

/** DATA frames written are cut to this size so one large write does not hold up every other stream */
const DATA_CHUNK = 32 * 1024;

export class SpdyStream extends Duplex {
  private localFin = false;
  private remoteFin = false;
  private wasReset = false;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super({ allowHalfOpen: true });
  }

  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()]?.[0];
  }

  override _read(): void {
    // the reader wants more: if this stream had stopped the socket, let it flow again
    this.conn.unstall(this);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (this.wasReset) return cb();
    if (this.localFin) return cb(new Error('write after FIN'));
    const sends: Promise<void>[] = [];
    for (let off = 0; off < chunk.length; off += DATA_CHUNK) {
      sends.push(this.conn.send({ type: 'data', streamId: this.id, fin: false, data: chunk.subarray(off, off + DATA_CHUNK) }));
    }
    Promise.all(sends).then(() => cb(), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    if (this.wasReset) return cb();
    this.localFin = true;
    this.conn.send({ type: 'data', streamId: this.id, fin: true, data: Buffer.alloc(0) }).then(() => {
      this.maybeDone();
      cb();
    }, cb);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    this.conn.forget(this.id);
    cb(err);
  }

  /** tears the stream down on both sides (RST_STREAM CANCEL) */
  reset(): void {
    if (!this.destroyed) void this.conn.send({ type: 'rst_stream', streamId: this.id, status: RstStatus.Cancel }).catch(() => undefined);
    this.destroy();
  }

  /** @internal */
  onData(data: Buffer, fin: boolean): void {
    if (this.remoteFin) return;
    // No window on the wire (see the module comment), so a reader that falls behind stops the whole socket until it
    // catches up — what spdystream does too (its frame workers block on an unread stream), and TCP pushes back.
    if (data.length > 0 && !this.push(data)) this.conn.stall(this);
    if (fin) this.onRemoteFin();
  }

  /** @internal */
  onRemoteFin(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.push(null);
    this.maybeDone();
  }

  /** @internal the peer reset the stream, or the connection went away */
  onReset(reason: string): void {
    if (!this.remoteFin) {
      this.remoteFin = true;
      this.push(null);
    }
    this.wasReset = true;
    // A reset is how kubelet ends streams after a session: not an error, and data already pushed must stay readable
    // (destroying the stream would drop it), so the readable side just ends and later writes are dropped.
    this.conn.forget(this.id);
    this.emit('reset', reason);
  }

  private maybeDone(): void {
    if (this.localFin && this.remoteFin) this.conn.forget(this.id);
  }
}

export interface SpdyConnectionEvents {
  stream: [SpdyStream];
  close: [];
  error: [Error];
}

export class SpdyConnection extends EventEmitter<SpdyConnectionEvents> {
  private readonly encoder = new FrameEncoder();
  private readonly decoder = new FrameDecoder();
  private readonly streams = new Map<number, SpdyStream>();
  private readonly pendingReplies = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private writeTail: Promise<void> = Promise.resolve();
  private readTail: Promise<void> = Promise.resolve();
  private nextStreamId: number;
  private lastPeerStreamId = 0;
  private goneAway = false;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    readonly role: 'client' | 'server',
    head?: Buffer,
  ) {
    super();
    this.nextStreamId = role === 'client' ? 1 : 2;
    socket.on('data', (chunk: Buffer) => this.onBytes(chunk));
    // frames already received are still being decoded (header inflation is asynchronous): tear down after them, so a
    // peer that writes its last frames and closes at once (kubelet does) is heard out
    const afterPending = () => {
      this.readTail = this.readTail.then(() => this.teardown());
    };
    socket.on('error', afterPending);
    socket.on('close', afterPending);
    socket.on('end', afterPending);
    if (head && head.length > 0) this.onBytes(head);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens a stream (client side) and resolves once the peer has replied, as spdystream's CreateStream + Wait. */
  async createStream(headers: SpdyHeaders, options: { fin?: boolean } = {}): Promise<SpdyStream> {
    if (this.closed || this.goneAway) throw new Error('SPDY connection is closed');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new SpdyStream(this, id, headers);
    this.streams.set(id, stream);
    const replied = new Promise<void>((resolve, reject) => this.pendingReplies.set(id, { resolve, reject }));
    await this.send({
      type: 'syn_stream',
      streamId: id,
      associatedTo: 0,
      priority: 0,
      fin: options.fin ?? false,
      unidirectional: false,
      headers,
    });
    if (options.fin) stream.end();
    await replied;
    return stream;
  }

  /** Queues a frame; frames go out in the order they were queued (header compression depends on it). */
  send(frame: SpdyFrame): Promise<void> {
    const next = this.writeTail.then(async () => {
      if (this.closed) throw new Error('SPDY connection is closed');
      const bytes = await this.encoder.encode(frame);
      await new Promise<void>((resolve, reject) => this.socket.write(bytes, (e) => (e ? reject(e) : resolve())));
    });
    this.writeTail = next.catch(() => undefined);
    return next;
  }

  /** GOAWAY, then end the socket once everything queued has been written */
  async close(): Promise<void> {
    if (this.closed) return;
    if (!this.goneAway) {
      this.goneAway = true;
      await this.send({ type: 'goaway', lastGoodStreamId: this.lastPeerStreamId, status: 0 }).catch(() => undefined);
    }
    await this.writeTail;
    this.socket.end();
    this.teardown();
  }

  destroy(): void {
    this.socket.destroy();
    this.teardown();
  }

  /** @internal */
  forget(id: number): void {
    const s = this.streams.get(id);
    this.streams.delete(id);
    if (s) this.unstall(s);
  }

  private readonly stalled = new Set<SpdyStream>();

  /** @internal a stream's reader is behind: stop reading the socket */
  stall(stream: SpdyStream): void {
    this.stalled.add(stream);
    this.socket.pause();
  }

  /** @internal */
  unstall(stream: SpdyStream): void {
    if (this.stalled.delete(stream) && this.stalled.size === 0 && !this.closed) this.socket.resume();
  }

  private onBytes(chunk: Buffer): void {
    this.decoder.push(chunk);
    this.readTail = this.readTail.then(async () => {
      if (this.closed) return;
      try {
        for (let frame = await this.decoder.next(); frame; frame = await this.decoder.next()) this.onFrame(frame);
      } catch (e) {
        // a framing or compression error leaves the connection unusable: say GOAWAY(PROTOCOL_ERROR) and drop it
        const err = e instanceof Error ? e : new SpdyProtocolError(String(e));
        void this.send({ type: 'goaway', lastGoodStreamId: this.lastPeerStreamId, status: 1 }).catch(() => undefined);
        if (this.listenerCount('error') > 0) this.emit('error', err);
        void this.writeTail.then(() => this.destroy());
      }
    });
  }

  private onFrame(frame: SpdyFrame): void {
    switch (frame.type) {
      case 'syn_stream': {
        const peerParity = this.role === 'server' ? 1 : 0;
        if (frame.streamId % 2 !== peerParity || frame.streamId <= this.lastPeerStreamId || this.goneAway) {
          void this.send({ type: 'rst_stream', streamId: frame.streamId, status: RstStatus.ProtocolError }).catch(() => undefined);
          return;
        }
        this.lastPeerStreamId = frame.streamId;
        const stream = new SpdyStream(this, frame.streamId, frame.headers);
        this.streams.set(frame.streamId, stream);
        if (frame.unidirectional) stream.end();
        // the reply is queued before the stream is handed out, so it precedes any DATA the handler writes
        void this.send({ type: 'syn_reply', streamId: frame.streamId, fin: false, headers: {} }).catch(() => undefined);
        if (frame.fin) stream.onRemoteFin();
        this.emit('stream', stream);
        return;
      }
      case 'syn_reply': {
        const pending = this.pendingReplies.get(frame.streamId);
        this.pendingReplies.delete(frame.streamId);
        pending?.resolve();
        if (frame.fin) this.streams.get(frame.streamId)?.onRemoteFin();
        return;
      }
      case 'headers':
        if (frame.fin) this.streams.get(frame.streamId)?.onRemoteFin();
        return;
      case 'data':
        this.streams.get(frame.streamId)?.onData(frame.data, frame.fin);
        return;
      case 'rst_stream': {
        const pending = this.pendingReplies.get(frame.streamId);
        this.pendingReplies.delete(frame.streamId);
        pending?.reject(new Error(`stream ${frame.streamId} refused (RST_STREAM status ${frame.status})`));
        this.streams.get(frame.streamId)?.onReset(`RST_STREAM status ${frame.status}`);
        return;
      }
      case 'ping': {
        // echo the peer's pings (their ids have the peer's parity); our own coming back need nothing
        const ours = this.role === 'server' ? 0 : 1;
        if (frame.id % 2 !== ours) void this.send(frame).catch(() => undefined);
        return;
      }
      case 'goaway':
        this.goneAway = true;
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and unknown control frames carry nothing this connection acts on
        return;
    }
  }

  private teardown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.pendingReplies.values()) p.reject(new Error('SPDY connection closed'));
    this.pendingReplies.clear();
    for (const s of [...this.streams.values()]) s.onReset('connection closed');
    this.streams.clear();
    this.encoder.close();
    this.decoder.close();
    // our side of the socket ends too (a peer that half-closed is waiting for it); one that never closes is cut
    if (!this.socket.destroyed) {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 5000).unref();
    }
    this.emit('close');
  }
}
