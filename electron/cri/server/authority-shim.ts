/**
 * Makes Node's HTTP/2 server accept the `:authority` that Go gRPC clients send over a unix socket.
 *
 * grpc-go (1.51, vendored by crictl/critest 1.26 and kubelet ≤ 1.26) dials a unix socket with the socket *path* as
 * the target, so every request carries e.g. `:authority: /run/podscope/podscope.sock`. nghttp2 (inside Node's http2,
 * used by grpc-js) validates `:authority` and resets such a stream with PROTOCOL_ERROR before grpc-js sees it, and
 * Node has no switch to turn that check off. containerd (Go server) accepts any authority. Newer clients send
 * "localhost" (kubernetes/kubernetes#112597), but 1.26-era tools are still common.
 *
 * The fix sits between the socket and nghttp2: client→server bytes are parsed into HTTP/2 frames; in every request
 * header block (HEADERS + CONTINUATION) a literal `:authority` whose value is invalid — or Huffman-coded, which we
 * do not decode — is rewritten to a raw "localhost" (cut to at most the original *encoded* length). Everything else
 * is copied byte for byte; server→client bytes are not touched.
 *
 * Why a shorter replacement keeps HPACK state in sync: the decoder's dynamic table then holds entries no larger than
 * the encoder's, so it always retains at least the entries the encoder still references (indices count from the
 * newest entry). A Huffman string's decoded length is ≥ its encoded length (encoders only use Huffman when it is
 * shorter), so "≤ encoded length" is also "≤ decoded length". Indexed references to a rewritten entry resolve to the
 * rewritten value automatically. A literal naming `:authority` through a *dynamic* index is passed through unchanged
 * (no client we know does that: Go, nghttp2, Java and C-core all use static index 1).
 *
 * The server does not use the authority (it serves one socket), so the rewrite loses nothing. Anything that does
 * not parse as HTTP/2 switches the connection to plain pass-through and nghttp2 reports the error as before.
 *
 * Header frames have to be held until their block is complete, so the shim bounds what it holds (one frame ≤ 16 KiB,
 * one block ≤ 64 KiB in ≤ 32 frames, see AuthorityRewriter); past a bound it stops rewriting and passes the raw
 * frames on, so oversized frames and CONTINUATION floods reach nghttp2 and get rejected there instead of piling up
 * here.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER = 9;
const TYPE_HEADERS = 0x1;
const TYPE_CONTINUATION = 0x9;
const FLAG_END_STREAM = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;
const FLAG_PRIORITY = 0x20;
/** The smallest SETTINGS_MAX_FRAME_SIZE any peer must accept; re-emitted header blocks are split at this size. */
const MAX_FRAME = 16384;
/** HPACK static table index of `:authority`. */
const STATIC_AUTHORITY = 1;
const REPLACEMENT = 'localhost';
/** Characters nghttp2 accepts in `:authority` (RFC 3986 authority: unreserved, sub-delims, ':', '@', '[', ']', '%'). */
const VALID_AUTHORITY = /^[A-Za-z0-9\-._~!$&'()*+,;=:@[\]%]*$/;

class HpackError extends Error {}

function readInt(b: Buffer, pos: number, prefixBits: number): { value: number; next: number } {
  if (pos >= b.length) throw new HpackError('truncated integer');
  const max = (1 << prefixBits) - 1;
  let value = b[pos]! & max;
  pos++;
  if (value < max) return { value, next: pos };
  let shift = 0;
  for (;;) {
    if (pos >= b.length || shift > 28) throw new HpackError('bad integer');
    const byte = b[pos++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(byte & 0x80)) return { value, next: pos };
  }
}

function writeInt(value: number, prefixBits: number, firstByteFlags: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByteFlags | value]);
  const out = [firstByteFlags | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

interface HpackString {
  huffman: boolean;
  raw: Buffer;
  end: number;
}

function readString(b: Buffer, pos: number): HpackString {
  if (pos >= b.length) throw new HpackError('truncated string');
  const huffman = (b[pos]! & 0x80) !== 0;
  const { value: len, next } = readInt(b, pos, 7);
  if (next + len > b.length) throw new HpackError('truncated string');
  return { huffman, raw: b.subarray(next, next + len), end: next + len };
}

/** The value a literal `:authority` field is sent on with, or undefined to keep it. */
function replacementFor(value: HpackString): Buffer | undefined {
  if (!value.huffman && VALID_AUTHORITY.test(value.raw.toString('latin1'))) return undefined;
  if (value.raw.length === 0) return undefined;
  return Buffer.from(REPLACEMENT.slice(0, Math.min(REPLACEMENT.length, value.raw.length)), 'latin1');
}

/**
 * One complete HPACK header block ⇒ the same block with invalid/Huffman `:authority` literals replaced (see the
 * module comment). Returns the input itself when nothing changed. Throws HpackError on a malformed block.
 */
export function sanitizeAuthorityInHeaderBlock(block: Buffer): Buffer {
  const parts: Buffer[] = [];
  let copyFrom = 0;
  let pos = 0;
  while (pos < block.length) {
    const first = block[pos]!;
    if (first & 0x80) {
      pos = readInt(block, pos, 7).next; // indexed field
      continue;
    }
    if ((first & 0xe0) === 0x20) {
      pos = readInt(block, pos, 5).next; // dynamic table size update
      continue;
    }
    // literal: with incremental indexing (01xxxxxx, 6-bit index) or without / never indexed (000xxxxx, 4-bit index)
    const prefixBits = (first & 0xc0) === 0x40 ? 6 : 4;
    const { value: nameIndex, next } = readInt(block, pos, prefixBits);
    pos = next;
    let isAuthority = nameIndex === STATIC_AUTHORITY;
    if (nameIndex === 0) {
      const name = readString(block, pos);
      pos = name.end;
      isAuthority = !name.huffman && name.raw.toString('latin1') === ':authority';
    }
    const valueStart = pos;
    const value = readString(block, pos);
    pos = value.end;
    if (!isAuthority) continue;
    const replacement = replacementFor(value);
    if (!replacement) continue;
    parts.push(block.subarray(copyFrom, valueStart), writeInt(replacement.length, 7, 0), replacement);
    copyFrom = pos;
  }
  if (parts.length === 0) return block;
  parts.push(block.subarray(copyFrom));
  return Buffer.concat(parts);
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const h = Buffer.alloc(FRAME_HEADER);
  h.writeUIntBE(length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId & 0x7fffffff, 5);
  return h;
}

/** A header block re-emitted as HEADERS (+ CONTINUATION) frames, unpadded, priority kept. */
function encodeHeaderFrames(streamId: number, flags: number, priority: Buffer | undefined, block: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const firstRoom = MAX_FRAME - (priority ? priority.length : 0);
  const firstChunk = block.subarray(0, firstRoom);
  let rest = block.subarray(firstChunk.length);
  const headFlags = (flags & (FLAG_END_STREAM | FLAG_PRIORITY)) | (rest.length === 0 ? FLAG_END_HEADERS : 0);
  out.push(frameHeader(firstChunk.length + (priority ? priority.length : 0), TYPE_HEADERS, headFlags, streamId));
  if (priority) out.push(priority);
  out.push(firstChunk);
  while (rest.length > 0) {
    const chunk = rest.subarray(0, MAX_FRAME);
    rest = rest.subarray(chunk.length);
    out.push(frameHeader(chunk.length, TYPE_CONTINUATION, rest.length === 0 ? FLAG_END_HEADERS : 0, streamId), chunk);
  }
  return out;
}

interface PendingHeaders {
  streamId: number;
  flags: number;
  priority: Buffer | undefined;
  fragments: Buffer[];
  rawFrames: Buffer[];
  blockBytes: number;
}

/** Largest HEADERS/CONTINUATION frame held for rewriting: the default SETTINGS_MAX_FRAME_SIZE, which the server keeps. */
export const MAX_HEADER_FRAME = MAX_FRAME;
/** Largest header block (sum of fragments) held for rewriting; real gRPC request headers are well under 1 KiB. */
export const MAX_HEADER_BLOCK = 64 * 1024;
/** Most frames (HEADERS + CONTINUATIONs) one held header block may span. */
export const MAX_HEADER_FRAGMENTS = 32;

/** A FIFO of received chunks: bytes are consumed from the front without re-concatenating what is still queued. */
class ChunkQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(b: Buffer): void {
    if (b.length === 0) return;
    this.chunks.push(b);
    this.length += b.length;
  }

  /** the first n bytes (n ≤ length) as one buffer, without consuming them; copies only when they span chunks */
  peek(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    const parts: Buffer[] = [];
    let need = n;
    for (const c of this.chunks) {
      if (need <= 0) break;
      const part = c.length > need ? c.subarray(0, need) : c;
      parts.push(part);
      need -= part.length;
    }
    return Buffer.concat(parts, n);
  }

  /** removes the first n bytes (n ≤ length) and appends them, as they are, to out */
  takeInto(n: number, out: Buffer[]): void {
    this.length -= n;
    while (n > 0) {
      const c = this.chunks[0]!;
      if (c.length <= n) {
        out.push(c);
        this.chunks.shift();
        n -= c.length;
      } else {
        out.push(c.subarray(0, n));
        this.chunks[0] = c.subarray(n);
        n = 0;
      }
    }
  }

  /** removes the first n bytes (n ≤ length) as one buffer */
  take(n: number): Buffer {
    const parts: Buffer[] = [];
    this.takeInto(n, parts);
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
  }

  drainInto(out: Buffer[]): void {
    this.takeInto(this.length, out);
  }
}

/** How long a connection that went past the header limits stays open for nghttp2's GOAWAY to reach the peer. */
const LIMIT_CLOSE_GRACE_MS = 500;

/** Thrown when a header block exceeds what the rewriter holds: the bytes go to nghttp2 unchanged, which rejects them. */
class TooLarge extends Error {}

/**
 * Incremental client→server rewriter: push() bytes as they arrive, get back the bytes to hand to nghttp2.
 *
 * Non-header frames are forwarded as soon as their bytes arrive (no whole-frame buffering). Header frames are
 * different: a HEADERS frame and its CONTINUATIONs are held until END_HEADERS, because `:authority` can only be
 * rewritten in a complete block. That hold is bounded — a frame longer than MAX_HEADER_FRAME, a block longer than
 * MAX_HEADER_BLOCK or spanning more than MAX_HEADER_FRAGMENTS frames is not held: what was held and everything
 * after it is handed to nghttp2 verbatim (pass-through from then on), and nghttp2 applies its own limits
 * (FRAME_SIZE_ERROR for an oversized frame, its CONTINUATION and header-list limits for a flood) and closes the
 * connection. So this shim never holds more than about MAX_HEADER_BLOCK + MAX_HEADER_FRAME bytes per connection,
 * and a flood never stays hidden from nghttp2.
 */
export class AuthorityRewriter {
  private readonly queue = new ChunkQueue();
  private stage: 'preface' | 'frames' | 'passthrough' = 'preface';
  /** payload bytes of a forwarded (non-header) frame still to copy through */
  private forwardRemaining = 0;
  private pending: PendingHeaders | undefined;

  /** bytes held back from nghttp2 right now (queued input plus held header frames); bounded, see the class comment */
  get heldBytes(): number {
    return this.queue.length + (this.pending ? this.pending.rawFrames.reduce((n, f) => n + f.length, 0) : 0);
  }

  /** true once the connection is passed through unchanged (not HTTP/2, malformed, or past a limit) */
  get passingThrough(): boolean {
    return this.stage === 'passthrough';
  }

  /** true once a header frame or block went past the limits (a connection error the peer caused) */
  limitExceeded = false;

  /** set when the rewriter hit an unexpected error and switched to pass-through (for logs and tests) */
  failure: string | undefined;

  push(chunk: Buffer): Buffer {
    if (this.stage === 'passthrough') return chunk;
    this.queue.push(chunk);
    const out: Buffer[] = [];
    try {
      this.drain(out);
    } catch (e) {
      // Whatever the rewriter cannot handle (malformed, too large, or a bug of its own) must not stall or drop
      // the connection's bytes: nghttp2 gets them verbatim and applies its own rules.
      if (e instanceof TooLarge) this.limitExceeded = true;
      else if (!(e instanceof HpackError)) this.failure = e instanceof Error ? e.message : String(e);
      // Unparseable or too large: give nghttp2 the original bytes of any held header frames plus the rest,
      // verbatim, from now on.
      if (this.pending) out.push(...this.pending.rawFrames);
      this.pending = undefined;
      this.queue.drainInto(out);
      this.stage = 'passthrough';
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  private drain(out: Buffer[]): void {
    if (this.stage === 'preface') {
      const n = Math.min(this.queue.length, PREFACE.length);
      if (!this.queue.peek(n).equals(PREFACE.subarray(0, n))) throw new HpackError('not an HTTP/2 client preface');
      if (this.queue.length < PREFACE.length) return;
      this.queue.takeInto(PREFACE.length, out);
      this.stage = 'frames';
    }
    for (;;) {
      if (this.forwardRemaining > 0) {
        const n = Math.min(this.forwardRemaining, this.queue.length);
        if (n === 0) return;
        this.queue.takeInto(n, out);
        this.forwardRemaining -= n;
        continue;
      }
      if (this.queue.length < FRAME_HEADER) return;
      const header = this.queue.peek(FRAME_HEADER);
      const length = header.readUIntBE(0, 3);
      const type = header[3]!;
      const flags = header[4]!;
      const streamId = header.readUInt32BE(5) & 0x7fffffff;
      const isHeaderFrame = type === TYPE_HEADERS || (type === TYPE_CONTINUATION && this.pending !== undefined);
      if (this.pending && !(type === TYPE_CONTINUATION && streamId === this.pending.streamId))
        throw new HpackError('header block interrupted');
      if (!isHeaderFrame) {
        this.queue.takeInto(FRAME_HEADER, out);
        this.forwardRemaining = length;
        continue;
      }
      // Checked on the frame header, before any of the payload is waited for.
      if (length > MAX_HEADER_FRAME) throw new TooLarge(`header frame of ${length} bytes`);
      if (this.pending && (this.pending.rawFrames.length >= MAX_HEADER_FRAGMENTS || this.pending.blockBytes + length > MAX_HEADER_BLOCK)) {
        throw new TooLarge('header block too large');
      }
      if (this.queue.length < FRAME_HEADER + length) return;
      const raw = this.queue.take(FRAME_HEADER + length);
      const payload = raw.subarray(FRAME_HEADER);
      if (type === TYPE_HEADERS) {
        let off = 0;
        let padLength = 0;
        if (flags & FLAG_PADDED) {
          if (payload.length < 1) throw new HpackError('bad padding');
          padLength = payload[0]!;
          off = 1;
        }
        let priority: Buffer | undefined;
        if (flags & FLAG_PRIORITY) {
          priority = payload.subarray(off, off + 5);
          off += 5;
        }
        if (off + padLength > payload.length || (priority && priority.length < 5)) throw new HpackError('bad HEADERS frame');
        const fragment = payload.subarray(off, payload.length - padLength);
        this.pending = { streamId, flags, priority, fragments: [fragment], rawFrames: [raw], blockBytes: fragment.length };
      } else {
        this.pending!.fragments.push(payload);
        this.pending!.rawFrames.push(raw);
        this.pending!.blockBytes += payload.length;
      }
      if (flags & FLAG_END_HEADERS) {
        const p = this.pending!;
        const block = p.fragments.length === 1 ? p.fragments[0]! : Buffer.concat(p.fragments);
        // still pending while decoding: a block that does not decode is handed on as it came (see push)
        const rewritten = sanitizeAuthorityInHeaderBlock(block);
        this.pending = undefined;
        if (rewritten === block) out.push(...p.rawFrames);
        else out.push(...encodeHeaderFrames(p.streamId, p.flags, p.priority, rewritten));
      }
    }
  }
}

/**
 * Wraps an accepted socket so that what the HTTP/2 server reads has been through AuthorityRewriter and what it
 * writes goes to the socket unchanged. Back-pressure is kept in both directions.
 */
export function authorityFixingStream(socket: Socket): Duplex {
  const rewriter = new AuthorityRewriter();
  const duplex: Duplex = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _enc, cb) {
      if (socket.destroyed) return cb(new Error('socket closed'));
      socket.write(chunk, (err) => cb(err ?? null));
    },
    // HTTP/2 hands over what it has to send as one corked batch (frame headers and payloads as separate buffers):
    // passed on corked too, they leave in one writev instead of one syscall per buffer, which for a 1,000-item
    // list reply is ~40 syscalls.
    writev(chunks: Array<{ chunk: Buffer }>, cb) {
      if (socket.destroyed) return cb(new Error('socket closed'));
      socket.cork();
      for (let i = 0; i < chunks.length - 1; i++) socket.write(chunks[i]!.chunk);
      socket.write(chunks[chunks.length - 1]!.chunk, (err) => cb(err ?? null));
      socket.uncork();
    },
    final(cb) {
      socket.end(() => cb());
    },
    destroy(err, cb) {
      // nghttp2 hands its last frames (trailers, GOAWAY) to this stream just before destroying it; a plain
      // socket.destroy() would drop what is still queued, so a clean close flushes first.
      if (err || socket.destroyed) socket.destroy();
      else socket.end(() => socket.destroy());
      cb(err);
    },
  });
  let closeTimer: NodeJS.Timeout | undefined;
  socket.on('data', (chunk: Buffer) => {
    const data = rewriter.push(chunk);
    if (data.length > 0 && !duplex.push(data)) socket.pause();
    // nghttp2 answers an oversized header frame with GOAWAY(FRAME_SIZE_ERROR) but leaves the socket open; a peer
    // that went past the header limits is cut once that GOAWAY had time to go out.
    if (rewriter.limitExceeded && !closeTimer) closeTimer = setTimeout(() => socket.destroy(), LIMIT_CLOSE_GRACE_MS).unref();
  });
  socket.on('end', () => duplex.push(null));
  socket.on('error', (e) => duplex.destroy(e));
  socket.on('close', () => {
    clearTimeout(closeTimer);
    if (!duplex.destroyed) duplex.destroy();
  });
  return duplex;
}
