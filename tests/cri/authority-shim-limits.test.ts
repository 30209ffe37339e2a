/**
 * The authority shim holds header frames until their block ends; that hold is bounded. A CONTINUATION flood or a
 * HEADERS frame announcing 16 MiB used to be buffered whole (server RSS grew with what the peer sent, connection
 * open); now the shim passes such frames to nghttp2 past its limits, and nghttp2 closes the connection.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { AuthorityRewriter, MAX_HEADER_BLOCK, MAX_HEADER_FRAME } from '../../electron/cri/server/authority-shim';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { rawClient, rpc, tempDir } from './helpers/grpc';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const frame = (len: number, type: number, flags: number, stream: number) => {
  const h = Buffer.alloc(9);
  h.writeUIntBE(len, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return h;
};
const SETTINGS = frame(0, 0x4, 0, 0);
/** HEADERS without END_HEADERS: `:method: POST` (static index 3) then a literal header whose value continues. */
const openHeaders = (payload = Buffer.from([0x83])) => Buffer.concat([frame(payload.length, 0x1, 0, 1), payload]);
const continuation = (size: number) => Buffer.concat([frame(size, 0x9, 0, 1), Buffer.alloc(size, 0x61)]);

describe('AuthorityRewriter limits', () => {
  it('a CONTINUATION flood is passed through once the block passes its limits; held bytes stay bounded', () => {
    const rw = new AuthorityRewriter();
    let inBytes = 0;
    let outBytes = 0;
    let maxHeld = 0;
    const feed = (b: Buffer) => {
      inBytes += b.length;
      outBytes += rw.push(b).length;
      maxHeld = Math.max(maxHeld, rw.heldBytes);
    };
    feed(Buffer.concat([PREFACE, SETTINGS, openHeaders()]));
    for (let i = 0; i < 2000; i++) feed(continuation(4096)); // 8 MiB
    expect(rw.passingThrough).toBe(true);
    expect(maxHeld).toBeLessThanOrEqual(MAX_HEADER_BLOCK + MAX_HEADER_FRAME + 64 * 9);
    expect(outBytes).toBe(inBytes); // nothing held back, nothing lost
  });

  it('many tiny CONTINUATION frames hit the fragment limit', () => {
    const rw = new AuthorityRewriter();
    let outBytes = 0;
    const input = [Buffer.concat([PREFACE, SETTINGS, openHeaders()]), ...Array.from({ length: 100 }, () => continuation(1))];
    for (const b of input) outBytes += rw.push(b).length;
    expect(rw.passingThrough).toBe(true);
    expect(outBytes).toBe(input.reduce((n, b) => n + b.length, 0));
  });

  it('a HEADERS frame announcing more than 16384 bytes is not waited for: its bytes go straight on', () => {
    const rw = new AuthorityRewriter();
    const head = Buffer.concat([PREFACE, SETTINGS, frame(0xffffff, 0x1, 0x4, 1)]);
    expect(rw.push(head)).toEqual(head);
    expect(rw.passingThrough).toBe(true);
    const body = Buffer.alloc(1 << 20, 0x62);
    expect(rw.push(body)).toBe(body);
    expect(rw.heldBytes).toBe(0);
  });

  it('many small chunks of one frame are queued without re-concatenating (linear, not quadratic)', () => {
    const rw = new AuthorityRewriter();
    rw.push(Buffer.concat([PREFACE, SETTINGS]));
    const block = Buffer.concat([Buffer.from([0x83, 0x41, 11]), Buffer.from('/tmp/x.sock'), Buffer.alloc(16384 - 14, 0x83)]);
    const framed = Buffer.concat([frame(block.length - 0, 0x1, 0x4, 1), block]);
    const out: Buffer[] = [];
    // Counted, not timed: every byte the rewriter copies goes through Buffer.concat (subarray and the queue's arrays
    // copy nothing). Re-concatenating what is queued on each of the frame's 16,393 one-byte pushes would copy about
    // n²/2 = 134 million bytes; held as chunks, each push copies at most the 9-byte frame header it peeks at, and the
    // frame is joined once at its end: under 16 bytes per byte pushed.
    let copied = 0;
    const concat = Buffer.concat.bind(Buffer);
    const spy = vi.spyOn(Buffer, 'concat').mockImplementation((list, totalLength) => {
      const joined = concat(list, totalLength);
      copied += joined.length;
      return joined;
    });
    try {
      for (let i = 0; i < framed.length; i++) out.push(rw.push(framed.subarray(i, i + 1)));
    } finally {
      spy.mockRestore();
    }
    expect(copied).toBeLessThan(16 * framed.length);
    expect(rw.passingThrough).toBe(false);
    expect(Buffer.concat(out).includes(Buffer.from('localhost'))).toBe(true);
  });
});

describe('against the server', () => {
  const tmp = tempDir('podscope-cri-shim-');
  let server: CriServer;
  let fakes: TestEngine;
  beforeAll(async () => {
    fakes = await createTestEngine();
    server = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock') });
  });
  afterAll(async () => {
    await server?.close();
    await fakes?.close();
    tmp.cleanup();
  });

  /** Writes chunks (respecting back-pressure) until the server closes the connection or `limit` bytes are sent. */
  const flood = async (first: Buffer, next: () => Buffer, limit: number) => {
    const sock: Socket = netConnect(server.socketPath);
    let closed = false;
    const closedP = new Promise<void>((r) =>
      sock.once('close', () => {
        closed = true;
        r();
      }),
    );
    sock.on('error', () => undefined);
    sock.on('data', () => undefined);
    await new Promise<void>((r) => sock.once('connect', () => r()));
    let sent = 0;
    const write = (b: Buffer) =>
      new Promise<void>((r) => {
        sent += b.length;
        if (sock.write(b)) r();
        else sock.once('drain', () => r());
      });
    await write(first);
    const deadline = Date.now() + 20_000;
    while (!closed && sent < limit && Date.now() < deadline) {
      await Promise.race([write(next()), closedP, new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())))]);
    }
    // whatever is in flight: give the server a moment to react
    await Promise.race([closedP, new Promise((r) => setTimeout(r, 2000))]);
    sock.destroy();
    return { closed, sent };
  };

  it('a CONTINUATION flood gets the connection closed long before 64 MiB, and server memory does not follow it', async () => {
    const before = process.memoryUsage().rss;
    const chunk = Buffer.concat(Array.from({ length: 16 }, () => continuation(16384)));
    const r = await flood(Buffer.concat([PREFACE, SETTINGS, openHeaders()]), () => chunk, 64 << 20);
    expect(r.closed).toBe(true);
    expect(r.sent).toBeLessThan(64 << 20);
    expect(process.memoryUsage().rss - before).toBeLessThan(48 << 20);
  });

  it('a HEADERS frame announcing 16 MiB gets the connection closed', async () => {
    const body = Buffer.alloc(1 << 20, 0x61);
    const r = await flood(Buffer.concat([PREFACE, SETTINGS, frame(0xffffff, 0x1, 0x4, 1)]), () => body, 15 << 20);
    expect(r.closed).toBe(true);
    expect(r.sent).toBeLessThan(15 << 20);
  });

  it('ordinary calls still work afterwards', async () => {
    const c = rawClient(server.socketPath);
    try {
      expect((await rpc(c, (x) => x.version, { version: '0.1.0' })).runtimeName).toBe('podscope');
    } finally {
      c.close();
    }
  });
});
