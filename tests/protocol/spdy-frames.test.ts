/**
 * SPDY/3 framing as Go's spdystream reads and writes it (the wire crictl, kubelet and containerd speak after
 * `Upgrade: SPDY/3.1`), the connection rules built on it, and the remotecommand payload codecs.
 */
import { PassThrough, Duplex } from 'node:stream';
import { constants as zc, createDeflate, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  FrameDecoder,
  FrameEncoder,
  SPDY3_DICTIONARY,
  SpdyProtocolError,
  decodeHeaderBlock,
  encodeHeaderBlock,
  type SpdyFrame,
} from '../../electron/cri/streaming/spdy-frames';
import { SpdyConnection, type SpdyStream } from '../../electron/cri/streaming/spdy-connection';
import { ResizeDecoder, exitCodeStatus, outcomeOfLegacy, outcomeOfV4, successStatus } from '../../electron/cri/streaming/protocol';

async function roundTrip(frames: SpdyFrame[], chunk = Infinity): Promise<SpdyFrame[]> {
  const enc = new FrameEncoder();
  const dec = new FrameDecoder();
  const bytes: Buffer[] = [];
  for (const f of frames) bytes.push(await enc.encode(f));
  const all = Buffer.concat(bytes);
  const out: SpdyFrame[] = [];
  for (let off = 0; off < all.length; off += Math.min(chunk, all.length)) {
    dec.push(all.subarray(off, off + Math.min(chunk, all.length)));
    for (let f = await dec.next(); f; f = await dec.next()) out.push(f);
  }
  enc.close();
  dec.close();
  return out;
}

describe('SPDY/3 frames', () => {
  const frames: SpdyFrame[] = [
    {
      type: 'syn_stream',
      streamId: 1,
      associatedTo: 0,
      priority: 0,
      fin: false,
      unidirectional: false,
      headers: { streamtype: ['error'] },
    },
    { type: 'syn_reply', streamId: 1, fin: false, headers: {} },
    {
      type: 'syn_stream',
      streamId: 3,
      associatedTo: 0,
      priority: 7,
      fin: true,
      unidirectional: false,
      headers: { streamtype: ['data'], port: ['80'], requestid: ['0'] },
    },
    { type: 'data', streamId: 3, fin: false, data: Buffer.from('hello') },
    { type: 'data', streamId: 3, fin: true, data: Buffer.alloc(0) },
    { type: 'headers', streamId: 3, fin: true, headers: { a: ['1', '2'] } },
    { type: 'rst_stream', streamId: 5, status: 5 },
    { type: 'settings', entries: [{ flags: 1, id: 7, value: 65536 }] },
    { type: 'ping', id: 2 },
    { type: 'window_update', streamId: 3, delta: 1000 },
    { type: 'goaway', lastGoodStreamId: 3, status: 0 },
  ];

  it('every frame type survives encode → decode, also when the bytes arrive one at a time', async () => {
    expect(await roundTrip(frames)).toEqual(frames);
    expect(await roundTrip(frames, 1)).toEqual(frames);
  });

  it('a control frame is C=1, version 3, type, then flags and a 24-bit length (SYN_STREAM: ids, priority in the top 3 bits)', async () => {
    const enc = new FrameEncoder();
    const b = await enc.encode({
      type: 'syn_stream',
      streamId: 5,
      associatedTo: 0,
      priority: 3,
      fin: true,
      unidirectional: false,
      headers: {},
    });
    expect(b.readUInt16BE(0)).toBe(0x8003);
    expect(b.readUInt16BE(2)).toBe(1);
    expect(b.readUInt8(4)).toBe(0x01);
    expect(b.readUIntBE(5, 3)).toBe(b.length - 8);
    expect(b.readUInt32BE(8)).toBe(5);
    expect(b.readUInt8(16)).toBe(3 << 5);
    const d = await enc.encode({ type: 'data', streamId: 5, fin: true, data: Buffer.from('xy') });
    expect([...d]).toEqual([0, 0, 0, 5, 1, 0, 0, 2, 0x78, 0x79]);
    enc.close();
  });

  it('header blocks are zlib with the SPDY/3 dictionary (FDICT set, DICTID = adler32 of it), one context per direction', async () => {
    const enc = new FrameEncoder();
    const h = { streamtype: ['stdout'] };
    const first = await enc.encode({ type: 'syn_reply', streamId: 1, fin: false, headers: h });
    const second = await enc.encode({ type: 'syn_reply', streamId: 3, fin: false, headers: h });
    enc.close();
    const block1 = first.subarray(12);
    // zlib header: CMF 0x78, FLG with FDICT (0x20), then the dictionary id Go's NewReaderDict checks
    expect(block1.readUInt8(0)).toBe(0x78);
    expect(block1.readUInt8(1) & 0x20).toBe(0x20);
    expect(block1.readUInt32BE(2)).toBe(adler32(SPDY3_DICTIONARY));
    // the second block continues the same stream (no zlib header again, and much shorter: it refers back)
    const block2 = second.subarray(12);
    expect(block2.length).toBeLessThan(block1.length);
    expect(() => inflateSync(block2, { dictionary: SPDY3_DICTIONARY })).toThrow();
    // a decoder keeps its context too: both decode in order
    const dec = new FrameDecoder();
    dec.push(Buffer.concat([first, second]));
    expect(await dec.next()).toMatchObject({ headers: h });
    expect(await dec.next()).toMatchObject({ streamId: 3, headers: h });
    dec.close();
  });

  it('reads what a best-compression, dictionary zlib writer with sync flushes produced (Go framer settings)', async () => {
    const z = createDeflate({ dictionary: SPDY3_DICTIONARY, level: zc.Z_BEST_COMPRESSION });
    const out: Buffer[] = [];
    z.on('data', (c: Buffer) => out.push(c));
    const block = encodeHeaderBlock({ streamtype: ['resize'] });
    await new Promise<void>((r) => z.write(block, () => z.flush(zc.Z_SYNC_FLUSH, () => r())));
    const payload = Buffer.concat([Buffer.from([0, 0, 0, 7, 0, 0, 0, 0, 0, 0]), Buffer.concat(out)]);
    const head = Buffer.from([0x80, 0x03, 0x00, 0x01, 0x00, 0, 0, 0]);
    head.writeUIntBE(payload.length, 5, 3);
    const dec = new FrameDecoder();
    dec.push(Buffer.concat([head, payload]));
    expect(await dec.next()).toMatchObject({ type: 'syn_stream', streamId: 7, headers: { streamtype: ['resize'] } });
    z.close();
    dec.close();
  });

  it('header names are lower-cased and several values travel NUL-joined', () => {
    const b = encodeHeaderBlock({ StreamType: ['stdin'], multi: ['a', 'b'] });
    expect(b.includes(Buffer.from('streamtype'))).toBe(true);
    expect(b.includes(Buffer.from('a\0b'))).toBe(true);
    expect(decodeHeaderBlock(b)).toEqual({ streamtype: ['stdin'], multi: ['a', 'b'] });
  });

  it('a truncated or lying header block, or another SPDY version, is a protocol error', async () => {
    const b = encodeHeaderBlock({ port: ['80'] });
    expect(() => decodeHeaderBlock(b.subarray(0, b.length - 1))).toThrow(SpdyProtocolError);
    const lie = Buffer.from(b);
    lie.writeUInt32BE(1_000_000, 0);
    expect(() => decodeHeaderBlock(lie)).toThrow(/count/);
    const dec = new FrameDecoder();
    dec.push(Buffer.from([0x80, 0x02, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 1]));
    await expect(dec.next()).rejects.toThrow(/version 2/);
    dec.close();
  });
});

/** two connected in-memory sockets */
function socketPair(): [Duplex, Duplex] {
  const aIn = new PassThrough();
  const bIn = new PassThrough();
  const a = Duplex.from({ readable: aIn, writable: bIn });
  const b = Duplex.from({ readable: bIn, writable: aIn });
  // destroying one end aborts the shared pipes under the other: that is the test's teardown, not a failure
  for (const s of [a, b, aIn, bIn]) s.on('error', () => undefined);
  return [a, b];
}

describe('SPDY connection rules', () => {
  it('the server replies to each SYN_STREAM before its data; data, FIN and a late RST all reach the reader', async () => {
    const [cs, ss] = socketPair();
    const client = new SpdyConnection(cs, 'client');
    const server = new SpdyConnection(ss, 'server');
    const accepted = new Promise<SpdyStream>((r) => server.once('stream', r));
    const s = await client.createStream({ streamtype: ['stdout'] });
    const peer = await accepted;
    expect(peer.header('streamType')).toBe('stdout');
    expect(peer.id).toBe(1);
    const got: Buffer[] = [];
    s.on('data', (c: Buffer) => got.push(c));
    const ended = new Promise((r) => s.once('end', r));
    peer.write('abc');
    // kubelet ends sessions with resets: data written before still reaches the reader
    await new Promise<void>((r) => peer.write('def', () => r()));
    peer.reset();
    await ended;
    expect(Buffer.concat(got).toString()).toBe('abcdef');
    client.destroy();
    server.destroy();
  });

  it('pings from the peer are echoed; a SYN_STREAM with the wrong id parity is reset', async () => {
    const [cs, ss] = socketPair();
    const server = new SpdyConnection(ss, 'server');
    const enc = new FrameEncoder();
    const dec = new FrameDecoder();
    const frames: SpdyFrame[] = [];
    cs.on('data', (c: Buffer) => dec.push(c));
    cs.write(await enc.encode({ type: 'ping', id: 1 }));
    cs.write(
      await enc.encode({ type: 'syn_stream', streamId: 2, associatedTo: 0, priority: 0, fin: false, unidirectional: false, headers: {} }),
    );
    while (frames.length < 2) {
      await new Promise((r) => setTimeout(r, 5));
      for (let f = await dec.next(); f; f = await dec.next()) frames.push(f);
    }
    expect(frames).toEqual([
      { type: 'ping', id: 1 },
      { type: 'rst_stream', streamId: 2, status: 1 },
    ]);
    enc.close();
    dec.close();
    server.destroy();
  });
});

describe('remotecommand payloads', () => {
  it('resize messages are concatenated JSON objects, possibly split across frames', () => {
    const sizes: unknown[] = [];
    const d = new ResizeDecoder((s) => sizes.push(s));
    d.push('{"Width":80,"Height":24}\n{"Wid');
    d.push('th":100,"Height":30}');
    d.push('{"Width":"x","Height":1}');
    expect(sizes).toEqual([
      { width: 80, height: 24 },
      { width: 100, height: 30 },
    ]);
  });

  it('the v4 error stream: Success is exit 0, NonZeroExitCode carries the code, anything else is an error', () => {
    expect(outcomeOfV4(JSON.stringify(successStatus()))).toEqual({ exitCode: 0 });
    // kubelet always writes a v4 Status, Success included: an empty error stream is a lost connection, not exit 0
    expect(outcomeOfV4('')).toMatchObject({ error: expect.stringMatching(/connection lost/) });
    const s = exitCodeStatus(3, ['sh']);
    expect(s).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
    expect(outcomeOfV4(JSON.stringify(s))).toEqual({ exitCode: 3 });
    expect(outcomeOfV4('{"metadata":{},"status":"Failure","message":"boom","reason":"InternalError","code":500}')).toEqual({
      error: 'boom',
    });
    expect(outcomeOfLegacy('')).toEqual({ exitCode: 0 });
    expect(outcomeOfLegacy('command terminated with non-zero exit code: error executing command [sh], exit code 7')).toEqual({
      exitCode: 7,
    });
  });
});

function adler32(buf: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of buf) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}
