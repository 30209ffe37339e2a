/**
 * SPDY/3 framing, as Go's spdystream (github.com/moby/spdystream/spdy) reads and writes it, which is what kubelet,
 * containerd 1.6's streaming server, client-go and crictl 1.26 all speak after `Upgrade: SPDY/3.1`.
 *
 * Why our own framing and not spdy-transport (installed): spdy-transport implements SPDY/3.1 flow control — a 64 KiB
 * initial window per stream and per connection that it will not send past until the peer sends WINDOW_UPDATE. Go's
 * spdystream never sends WINDOW_UPDATE (it ignores the frame type altogether), so spdy-transport stalls for good after
 * the first 64 KiB of stdout or of a forwarded connection towards a Go peer. spdy-transport's server side also expects
 * to own an HTTP/1.1-less TLS/NPN socket and pushes SETTINGS/WINDOW_UPDATE a Go peer does not need. The protocol
 * subset kubelet uses (SYN_STREAM/SYN_REPLY/DATA/RST_STREAM/PING/GOAWAY, header blocks) is small, so it is written here.
 * Only the header dictionary is taken from spdy-transport (it is the SPDY/3 spec's constant).
 *
 * Control frame: 1 bit control (1), 15 bits version (3), 16 bits type, 8 bits flags, 24 bits length, payload.
 * Data frame:    1 bit control (0), 31 bits stream id, 8 bits flags, 24 bits length, payload.
 * Header block:  uint32 count, then per header uint32 name length, name (lower case), uint32 value length, value
 *                (several values joined by NUL); compressed with zlib (BEST_COMPRESSION in Go, any level reads) using
 *                the SPDY/3 dictionary, one compression context per direction for the whole connection, each frame's
 *                block ending in a sync flush.
 */
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
// a static import, so the production bundle (scripts/build-electron.mjs) carries it: there is no node_modules there
import dictionaries from 'spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js';
export const SPDY3_DICTIONARY: Buffer = dictionaries[3]!;

export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;
/** the largest payload a frame's 24-bit length can carry */
export const MAX_FRAME_PAYLOAD = 0xffffff;

export const enum ControlType {
  SynStream = 1,
  SynReply = 2,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  GoAway = 7,
  Headers = 8,
  WindowUpdate = 9,
}

export const RstStatus = {
  ProtocolError: 1,
  InvalidStream: 2,
  RefusedStream: 3,
  UnsupportedVersion: 4,
  Cancel: 5,
  InternalError: 6,
} as const;

/** header name (lower case) → values */
export type SpdyHeaders = Record<string, string[]>;

export type SpdyFrame =
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer }
  | {
      type: 'syn_stream';
      streamId: number;
      associatedTo: number;
      priority: number;
      fin: boolean;
      unidirectional: boolean;
      headers: SpdyHeaders;
    }
  | { type: 'syn_reply'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'headers'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; entries: { flags: number; id: number; value: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'window_update'; streamId: number; delta: number }
  | { type: 'unknown'; controlType: number };

export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const names = Object.keys(headers);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(names.length);
  parts.push(count);
  for (const name of names) {
    const n = Buffer.from(name.toLowerCase());
    const v = Buffer.from((headers[name] ?? []).join('\0'));
    const nl = Buffer.alloc(4);
    nl.writeUInt32BE(n.length);
    const vl = Buffer.alloc(4);
    vl.writeUInt32BE(v.length);
    parts.push(nl, n, vl, v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let off = 0;
  const u32 = () => {
    if (off + 4 > block.length) throw new SpdyProtocolError('header block truncated');
    const v = block.readUInt32BE(off);
    off += 4;
    return v;
  };
  const bytes = (n: number) => {
    if (off + n > block.length) throw new SpdyProtocolError('header block truncated');
    const v = block.subarray(off, off + n);
    off += n;
    return v;
  };
  const count = u32();
  // each header needs at least 8 bytes: a count past that is a lie, refuse before looping over it
  if (count > (block.length - 4) / 8) throw new SpdyProtocolError('header count exceeds block');
  for (let i = 0; i < count; i++) {
    const name = bytes(u32()).toString('latin1').toLowerCase();
    const value = bytes(u32()).toString('latin1');
    (headers[name] ??= []).push(...value.split('\0'));
  }
  return headers;
}

/** Runs zlib over one connection's header blocks in order; each block comes back sync-flushed. */
class ZlibContext {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly chunks: Buffer[] = [];
  private failed: Error | undefined;
  constructor(private readonly z: Deflate | Inflate) {
    z.on('data', (c: Buffer) => this.chunks.push(c));
    z.on('error', (e: Error) => (this.failed = e));
  }
  run(input: Buffer): Promise<Buffer> {
    const next = this.tail.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          if (this.failed) return reject(this.failed);
          this.z.write(input, (err) => {
            if (err || this.failed) return reject(err ?? this.failed);
            const out = Buffer.concat(this.chunks);
            this.chunks.length = 0;
            resolve(out);
          });
        }),
    );
    this.tail = next.catch(() => undefined);
    return next;
  }
  close(): void {
    this.z.close();
  }
}

/** Writes frames for one direction of a connection (owns the compression context). */
export class FrameEncoder {
  private readonly deflate = new ZlibContext(
    createDeflate({ dictionary: SPDY3_DICTIONARY, flush: zc.Z_SYNC_FLUSH, level: zc.Z_BEST_COMPRESSION }),
  );

  /** Frames must be encoded in the order they are written: header compression is stateful. */
  async encode(frame: SpdyFrame): Promise<Buffer> {
    switch (frame.type) {
      case 'data': {
        if (frame.data.length > MAX_FRAME_PAYLOAD) throw new SpdyProtocolError('data frame too large');
        const h = Buffer.alloc(8);
        h.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
        h.writeUInt32BE(((frame.fin ? FLAG_FIN : 0) << 24) | frame.data.length, 4);
        return Buffer.concat([h, frame.data]);
      }
      case 'syn_stream': {
        const block = await this.deflate.run(encodeHeaderBlock(frame.headers));
        const p = Buffer.alloc(10);
        p.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
        p.writeUInt32BE(frame.associatedTo & 0x7fffffff, 4);
        p.writeUInt8((frame.priority & 0x7) << 5, 8);
        p.writeUInt8(0, 9);
        const flags = (frame.fin ? FLAG_FIN : 0) | (frame.unidirectional ? FLAG_UNIDIRECTIONAL : 0);
        return control(ControlType.SynStream, flags, Buffer.concat([p, block]));
      }
      case 'syn_reply':
      case 'headers': {
        const block = await this.deflate.run(encodeHeaderBlock(frame.headers));
        return control(
          frame.type === 'syn_reply' ? ControlType.SynReply : ControlType.Headers,
          frame.fin ? FLAG_FIN : 0,
          Buffer.concat([u32(frame.streamId & 0x7fffffff), block]),
        );
      }
      case 'rst_stream':
        return control(ControlType.RstStream, 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.status)]));
      case 'settings': {
        const parts = [u32(frame.entries.length)];
        for (const e of frame.entries) parts.push(u32(((e.flags & 0xff) << 24) | (e.id & 0xffffff)), u32(e.value));
        return control(ControlType.Settings, 0, Buffer.concat(parts));
      }
      case 'ping':
        return control(ControlType.Ping, 0, u32(frame.id));
      case 'goaway':
        return control(ControlType.GoAway, 0, Buffer.concat([u32(frame.lastGoodStreamId & 0x7fffffff), u32(frame.status)]));
      case 'window_update':
        return control(ControlType.WindowUpdate, 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.delta & 0x7fffffff)]));
      case 'unknown':
        throw new SpdyProtocolError('cannot encode an unknown frame');
    }
  }

  close(): void {
    this.deflate.close();
  }
}

/**
 * Reads frames for one direction of a connection: push bytes as they arrive, get whole frames in order.
 * Frames of a version other than 3 are a protocol error; unknown control types are passed up as 'unknown'.
 */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private readonly inflate = new ZlibContext(createInflate({ dictionary: SPDY3_DICTIONARY, flush: zc.Z_SYNC_FLUSH }));

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
  }

  /** the next complete frame, or undefined when more bytes are needed */
  async next(): Promise<SpdyFrame | undefined> {
    if (this.buf.length < 8) return undefined;
    const w0 = this.buf.readUInt32BE(0);
    const w1 = this.buf.readUInt32BE(4);
    const flags = w1 >>> 24;
    const length = w1 & 0xffffff;
    if (this.buf.length < 8 + length) return undefined;
    const payload = this.buf.subarray(8, 8 + length);
    this.buf = this.buf.subarray(8 + length);
    if ((w0 & 0x80000000) === 0) {
      return { type: 'data', streamId: w0 & 0x7fffffff, fin: (flags & FLAG_FIN) !== 0, data: Buffer.from(payload) };
    }
    const version = (w0 >>> 16) & 0x7fff;
    if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
    const type = w0 & 0xffff;
    const need = (n: number) => {
      if (payload.length < n) throw new SpdyProtocolError(`control frame ${type} too short`);
    };
    switch (type) {
      case ControlType.SynStream: {
        need(10);
        const headers = decodeHeaderBlock(await this.inflate.run(payload.subarray(10)));
        return {
          type: 'syn_stream',
          streamId: payload.readUInt32BE(0) & 0x7fffffff,
          associatedTo: payload.readUInt32BE(4) & 0x7fffffff,
          priority: payload.readUInt8(8) >>> 5,
          fin: (flags & FLAG_FIN) !== 0,
          unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0,
          headers,
        };
      }
      case ControlType.SynReply:
      case ControlType.Headers: {
        need(4);
        const headers = decodeHeaderBlock(await this.inflate.run(payload.subarray(4)));
        return {
          type: type === ControlType.SynReply ? 'syn_reply' : 'headers',
          streamId: payload.readUInt32BE(0) & 0x7fffffff,
          fin: (flags & FLAG_FIN) !== 0,
          headers,
        };
      }
      case ControlType.RstStream:
        need(8);
        return { type: 'rst_stream', streamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.readUInt32BE(4) };
      case ControlType.Settings: {
        need(4);
        const n = payload.readUInt32BE(0);
        need(4 + n * 8);
        const entries = [];
        for (let i = 0; i < n; i++) {
          const idw = payload.readUInt32BE(4 + i * 8);
          entries.push({ flags: idw >>> 24, id: idw & 0xffffff, value: payload.readUInt32BE(8 + i * 8) });
        }
        return { type: 'settings', entries };
      }
      case ControlType.Ping:
        need(4);
        return { type: 'ping', id: payload.readUInt32BE(0) };
      case ControlType.GoAway:
        need(4);
        return {
          type: 'goaway',
          lastGoodStreamId: payload.readUInt32BE(0) & 0x7fffffff,
          status: payload.length >= 8 ? payload.readUInt32BE(4) : 0,
        };
      case ControlType.WindowUpdate:
        need(8);
        return { type: 'window_update', streamId: payload.readUInt32BE(0) & 0x7fffffff, delta: payload.readUInt32BE(4) & 0x7fffffff };
      default:
        return { type: 'unknown', controlType: type };
    }
  }

  close(): void {
    this.inflate.close();
  }
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
}

function control(type: ControlType, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw new SpdyProtocolError('control frame too large');
  const h = Buffer.alloc(8);
  h.writeUInt32BE((0x8000 | SPDY_VERSION) * 0x10000 + type, 0);
  h.writeUInt32BE((((flags & 0xff) << 24) >>> 0) + payload.length, 4);
  return Buffer.concat([h, payload]);
}
