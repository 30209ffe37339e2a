/**
 * Regressions found running crictl 1.26.1 and critest 1.26.1 (grpc-go 1.51, cri-client from kubernetes 1.26) against
 * `podscope cri`:
 *  1. Go clients send the socket path as `:authority`; nghttp2 reset every such stream with PROTOCOL_ERROR
 *     ("stream terminated by RST_STREAM with error code: PROTOCOL_ERROR" on `crictl version`). authority-shim.ts.
 *  2. cri-client validates the image endpoint with ImageFsInfo and refuses UNIMPLEMENTED, so critest (and crictl
 *     image commands) could not start. image-service.ts.
 *  3. PodSandboxStatus listed every sandbox to resolve the id; ids now pass straight to the engine.
 * The Go side is imitated with grpc-js clients that send the same `:authority` and with hand-built HPACK blocks.
 */
import { connect as h2connect, constants as h2 } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, Metadata, status as Code, type ServiceError } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { AuthorityRewriter, sanitizeAuthorityInHeaderBlock } from '../../electron/cri/server/authority-shim';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { codeOf, podConfig, rpc, tempDir } from './helpers/grpc';

const tmp = tempDir('podscope-cri-go-');
let fakes: TestEngine;
let listCalls = 0;
let server: CriServer;
let goLike: pb.RuntimeServiceClient;
let images: pb.ImageServiceClient;

beforeAll(async () => {
  fakes = await createTestEngine();
  const engine = fakes.engine;
  // counts list calls (a spy on the real engine): status/stop/remove must pass ids straight through
  const list = engine.list.bind(engine);
  engine.list = (filter) => {
    listCalls++;
    return list(filter);
  };
  server = await startCriServer({ engine, socketPath: join(tmp.dir, 'cri.sock') });
  // what grpc-go 1.51 puts in :authority for a unix socket target: the path itself
  const opts = { 'grpc.default_authority': server.socketPath };
  goLike = new pb.RuntimeServiceClient(`unix://${server.socketPath}`, credentials.createInsecure(), opts);
  images = new pb.ImageServiceClient(`unix://${server.socketPath}`, credentials.createInsecure(), opts);
});

afterAll(async () => {
  goLike?.close();
  images?.close();
  await server?.close();
  await fakes?.close();
  tmp.cleanup();
});

/** One HPACK string literal, raw (not Huffman). */
const str = (s: string) => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'latin1')]);

describe('a socket-path :authority (grpc-go ≤ 1.5x on unix sockets)', () => {
  it('is accepted: many calls on one connection, so HPACK dynamic-table references to the rewritten entry work too', async () => {
    for (let i = 0; i < 20; i++) {
      const v = await rpc(goLike, (c) => c.version, { version: '0.1.0' });
      expect(v.runtimeName).toBe('podscope');
      expect((await rpc(goLike, (c) => c.status, { verbose: false })).status?.conditions.length).toBeGreaterThan(0);
    }
    const { podSandboxId: id } = await rpc(goLike, (c) => c.runPodSandbox, { config: podConfig('go-like'), runtimeHandler: '' });
    expect((await rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: true })).status?.id).toBe(id);
    await rpc(goLike, (c) => c.removePodSandbox, { podSandboxId: id });
  });

  it('is accepted from a raw HTTP/2 client too (nghttp2 would otherwise reset the stream)', async () => {
    const session = h2connect('http://localhost', { createConnection: () => netConnect(server.socketPath) });
    try {
      const body = Buffer.from([0, 0, 0, 0, 2, 0x0a, 0x00]); // gRPC frame: VersionRequest{version: ""}
      const result = await new Promise<{ rst: number; grpcStatus?: string }>((resolve) => {
        const req = session.request({
          [h2.HTTP2_HEADER_METHOD]: 'POST',
          [h2.HTTP2_HEADER_PATH]: '/runtime.v1.RuntimeService/Version',
          [h2.HTTP2_HEADER_AUTHORITY]: '/run/podscope/podscope.sock',
          'content-type': 'application/grpc',
          te: 'trailers',
        });
        let grpcStatus: string | undefined;
        req.on('trailers', (t) => {
          grpcStatus = String(t['grpc-status']);
        });
        req.on('error', () => undefined);
        req.on('close', () => resolve({ rst: req.rstCode ?? 0, grpcStatus }));
        req.resume();
        req.end(body);
      });
      expect(result).toEqual({ rst: h2.NGHTTP2_NO_ERROR, grpcStatus: '0' });
    } finally {
      session.close();
    }
  });
});

describe('sanitizeAuthorityInHeaderBlock (HPACK)', () => {
  it('rewrites a raw invalid value, keeps its representation and never grows it', () => {
    const block = Buffer.concat([Buffer.from([0x83]), Buffer.from([0x41]), str('/run/x.sock'), Buffer.from([0x44]), str('/a/b')]);
    const out = sanitizeAuthorityInHeaderBlock(block);
    expect(out).toEqual(Buffer.concat([Buffer.from([0x83]), Buffer.from([0x41]), str('localhost'), Buffer.from([0x44]), str('/a/b')]));
    // shorter than "localhost": cut so the decoder's dynamic-table entry is never larger than the encoder's
    expect(sanitizeAuthorityInHeaderBlock(Buffer.concat([Buffer.from([0x41]), str('/s')]))).toEqual(
      Buffer.concat([Buffer.from([0x41]), str('lo')]),
    );
  });

  it('rewrites Huffman values (not decoded) and a literal ":authority" name; leaves valid raw values as they are', () => {
    const huff = Buffer.from([0x41, 0x80 | 12, ...Buffer.alloc(12, 0xaa)]);
    expect(sanitizeAuthorityInHeaderBlock(huff)).toEqual(Buffer.concat([Buffer.from([0x41]), str('localhost')]));
    const neverIndexedNewName = Buffer.concat([Buffer.from([0x10]), str(':authority'), str('/p/q.sock')]);
    expect(sanitizeAuthorityInHeaderBlock(neverIndexedNewName)).toEqual(
      Buffer.concat([Buffer.from([0x10]), str(':authority'), str('localhost')]),
    );
    const valid = Buffer.concat([Buffer.from([0x41]), str('localhost:1234')]);
    expect(sanitizeAuthorityInHeaderBlock(valid)).toBe(valid);
  });

  it('AuthorityRewriter handles padded/priority HEADERS + CONTINUATION fed one byte at a time and forwards other frames verbatim', () => {
    const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
    const frame = (len: number, type: number, flags: number, stream: number) => {
      const h = Buffer.alloc(9);
      h.writeUIntBE(len, 0, 3);
      h[3] = type;
      h[4] = flags;
      h.writeUInt32BE(stream, 5);
      return h;
    };
    const settings = Buffer.concat([frame(6, 0x4, 0, 0), Buffer.from([0, 3, 0, 0, 0, 100])]);
    const part1 = Buffer.concat([Buffer.from([0x83, 0x41]), str('/tmp/cri.sock').subarray(0, 4)]);
    const part2 = str('/tmp/cri.sock').subarray(4);
    const priority = Buffer.from([0, 0, 0, 0, 15]);
    const headers = Buffer.concat([
      frame(1 + 5 + part1.length + 2, 0x1, 0x8 | 0x20 | 0x1, 1),
      Buffer.from([2]),
      priority,
      part1,
      Buffer.alloc(2),
    ]);
    const continuation = Buffer.concat([frame(part2.length, 0x9, 0x4, 1), part2]);
    const data = Buffer.concat([frame(3, 0x0, 0x1, 3), Buffer.from('abc')]);
    const input = Buffer.concat([preface, settings, headers, continuation, data]);
    const rw = new AuthorityRewriter();
    const out = Buffer.concat([...input].map((b) => rw.push(Buffer.from([b]))));
    const block = Buffer.concat([Buffer.from([0x83, 0x41]), str('localhost')]);
    expect(out).toEqual(Buffer.concat([preface, settings, frame(5 + block.length, 0x1, 0x20 | 0x1 | 0x4, 1), priority, block, data]));
  });

  it('gives up on anything that is not HTTP/2 and passes it through', () => {
    const rw = new AuthorityRewriter();
    expect(rw.push(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual(Buffer.from('GET / HTTP/1.1\r\n'));
    expect(rw.push(Buffer.from('x'))).toEqual(Buffer.from('x'));
  });
});

describe('ImageService (cri-client checks ImageFsInfo on connect)', () => {
  const call = <Req, Res>(
    m: (c: pb.ImageServiceClient) => (req: Req, md: Metadata, o: object, cb: (e: ServiceError | null, r: Res) => void) => unknown,
    req: Req,
  ) =>
    new Promise<Res>((resolve, reject) => {
      m(images).call(images, req, new Metadata(), { deadline: Date.now() + 5000 }, (e, r) => (e ? reject(e) : resolve(r)));
    });

  it('answers ImageFsInfo, ListImages and ImageStatus (a missing image is an empty response, not an error)', async () => {
    const fs = await call<pb.ImageFsInfoRequest, pb.ImageFsInfoResponse>((c) => c.imageFsInfo, {});
    expect(fs.imageFilesystems[0]?.fsId?.mountpoint).toBe(fakes.images.root);
    expect(await call((c) => c.listImages, { filter: undefined })).toEqual({ images: [] });
    const st = await call<pb.ImageStatusRequest, pb.ImageStatusResponse>((c) => c.imageStatus, {
      image: pb.ImageSpec.fromPartial({ image: 'busybox' }),
      verbose: false,
    });
    expect(st.image).toBeUndefined();
  });
});

describe('sandbox ids pass straight to the engine', () => {
  it('status/stop/remove by full id or prefix never list the sandboxes; unknown/empty/ambiguous keep their codes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 17; i++)
      ids.push((await rpc(goLike, (c) => c.runPodSandbox, { config: podConfig(`pass-${i}`), runtimeHandler: '' })).podSandboxId);
    const id = ids[0]!;
    const before = listCalls;
    expect((await rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false })).status?.id).toBe(id);
    expect((await rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: id.slice(0, 13), verbose: true })).status?.id).toBe(id);
    await rpc(goLike, (c) => c.stopPodSandbox, { podSandboxId: id.slice(0, 13) });
    await rpc(goLike, (c) => c.stopPodSandbox, { podSandboxId: id });
    expect((await rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false })).status?.state).toBe(
      pb.PodSandboxState.SANDBOX_NOTREADY,
    );
    const unknown = 'deadbeef'.repeat(8);
    expect(await codeOf(rpc(goLike, (c) => c.stopPodSandbox, { podSandboxId: unknown }))).toBe(0);
    expect(await codeOf(rpc(goLike, (c) => c.removePodSandbox, { podSandboxId: unknown }))).toBe(0);
    await expect(rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: unknown, verbose: false })).rejects.toMatchObject({
      code: Code.NOT_FOUND,
      details: `an error occurred when try to find sandbox "${unknown}": not found`,
    });
    expect(await codeOf(rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: '', verbose: false }))).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(goLike, (c) => c.removePodSandbox, { podSandboxId: '' }))).toBe(Code.INVALID_ARGUMENT);
    // 17 sandboxes ⇒ two share a first hex digit
    const shared = ids.map((x) => x[0]!).find((c, i, all) => all.indexOf(c) !== i)!;
    expect(await codeOf(rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: shared, verbose: false }))).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(goLike, (c) => c.stopPodSandbox, { podSandboxId: shared }))).toBe(Code.INVALID_ARGUMENT);
    await rpc(goLike, (c) => c.removePodSandbox, { podSandboxId: id.slice(0, 13) });
    expect(await codeOf(rpc(goLike, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false }))).toBe(Code.NOT_FOUND);
    expect(listCalls).toBe(before);
    for (const x of ids.slice(1)) await rpc(goLike, (c) => c.removePodSandbox, { podSandboxId: x });
  });
});
