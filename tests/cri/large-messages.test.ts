/**
 * Requests up to gRPC's default max receive size (4 MiB) are answered, and the connection stays usable for the next
 * call. Found by fuzzing: a 110 KiB RunPodSandbox was never answered (DEADLINE_EXCEEDED) and the next small call on
 * the same connection hung too. The server is backed by the real engine over fake touch points, so the request goes
 * through the engine's own parsing and validation (where the time went: a backtracking quantity RegExp, see
 * tests/unit/bandwidth.test.ts), through the `:authority` shim (Go-style clients), and back with large error texts.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status as Code } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { AuthorityRewriter } from '../../electron/cri/server/authority-shim';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createFakeHostEngine, type FakeHostEngine } from './helpers/fake-host-engine';
import { codeOf, podConfig, rpc, tempDir } from './helpers/grpc';

const KiB = 1024;
/** gRPC's default max receive message size, minus room for the rest of the request */
const NEAR_LIMIT = 4 * 1024 * KiB - 2 * KiB;

const tmp = tempDir('podscope-r3-large-');
let host: FakeHostEngine;
let server: CriServer;

beforeAll(async () => {
  host = await createFakeHostEngine();
  server = await startCriServer({ engine: host.engine, socketPath: join(tmp.dir, 'cri.sock') });
});

afterAll(async () => {
  await server?.close();
  await host?.dispose();
  tmp.cleanup();
});

const clients = {
  'grpc-js (authority "localhost")': (path: string) => new pb.RuntimeServiceClient(`unix://${path}`, credentials.createInsecure()),
  // what grpc-go ≤ 1.5x sends on a unix socket: the socket path, which the shim rewrites
  'Go-style (socket path as :authority)': (path: string) =>
    new pb.RuntimeServiceClient(`unix://${path}`, credentials.createInsecure(), { 'grpc.default_authority': path }),
};

/** Sandbox configs of about `size` bytes on the wire, each exercising another part of the engine with the bulk. */
const bulky: Record<string, (size: number, tag: string) => pb.PodSandboxConfig> = {
  'an annotation (accepted)': (size, tag) => podConfig(`ann-${tag}`, { annotations: { bulk: 'a'.repeat(size) } }),
  'a bandwidth annotation of digits with a bad suffix (refused)': (size, tag) =>
    podConfig(`bw-${tag}`, { annotations: { 'kubernetes.io/ingress-bandwidth': `${'1'.repeat(size)}x` } }),
  'a hostname (refused; the error text quotes it)': (size, tag) => podConfig(`host-${tag}`, { hostname: 'h'.repeat(size) }),
  'a sysctl name (refused)': (size, tag) =>
    podConfig(`sysctl-${tag}`, { linux: pb.LinuxPodSandboxConfig.fromPartial({ sysctls: { [`net.${'x'.repeat(size)}.`]: '1' } }) }),
};
const expected: Record<string, number> = {
  'an annotation (accepted)': Code.OK,
  'a bandwidth annotation of digits with a bad suffix (refused)': Code.INVALID_ARGUMENT,
  'a hostname (refused; the error text quotes it)': Code.INVALID_ARGUMENT,
  'a sysctl name (refused)': Code.INVALID_ARGUMENT,
};

describe.each(Object.entries(clients))('%s', (clientName, makeClient) => {
  describe.each([110 * KiB, 1024 * KiB, NEAR_LIMIT])('a request of about %i bytes', (size) => {
    it.each(Object.keys(bulky))('carrying %s is answered, and the next small call on the connection too', async (kind) => {
      const client = makeClient(server.socketPath);
      try {
        const tag = `${clientName.startsWith('Go') ? 'go' : 'js'}-${size}`;
        const config = bulky[kind]!(size, tag);
        expect(pb.RunPodSandboxRequest.encode({ config, runtimeHandler: '' }).finish().length).toBeLessThanOrEqual(4 * 1024 * KiB);
        expect(await codeOf(rpc(client, (c) => c.runPodSandbox, { config, runtimeHandler: '' }, 20_000))).toBe(expected[kind]);
        expect((await rpc(client, (c) => c.version, { version: '0.1.0' }, 10_000)).runtimeName).toBe('podscope');
      } finally {
        client.close();
      }
    });
  });

  it('a request over 4 MiB is refused with RESOURCE_EXHAUSTED, and the connection keeps serving', async () => {
    const client = makeClient(server.socketPath);
    try {
      const config = podConfig('too-big', { annotations: { bulk: 'a'.repeat(4 * 1024 * KiB + KiB) } });
      expect(await codeOf(rpc(client, (c) => c.runPodSandbox, { config, runtimeHandler: '' }, 20_000))).toBe(Code.RESOURCE_EXHAUSTED);
      expect((await rpc(client, (c) => c.version, { version: '0.1.0' }, 10_000)).runtimeName).toBe('podscope');
    } finally {
      client.close();
    }
  });
});

describe('what the server holds afterwards', () => {
  it('only the accepted sandboxes; removing them releases everything', async () => {
    const list = await host.engine.list();
    expect(list.map((s) => s.metadata.name).sort()).toEqual(
      Object.keys(clients)
        .flatMap((c) => [110 * KiB, 1024 * KiB, NEAR_LIMIT].map((n) => `ann-${c.startsWith('Go') ? 'go' : 'js'}-${n}`))
        .sort(),
    );
    for (const s of list) {
      await host.engine.stop(s.id);
      await host.engine.remove(s.id);
    }
    expect(host.held()).toEqual({ netns: 0, containers: 0, files: 0, shm: 0, cniCache: 0 });
  });
});

describe('AuthorityRewriter on a header block it cannot decode', () => {
  it('hands the block to nghttp2 as it came (frames intact) and passes everything after it through', () => {
    const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
    const frame = (len: number, type: number, flags: number, stream: number) => {
      const h = Buffer.alloc(9);
      h.writeUIntBE(len, 0, 3);
      h[3] = type;
      h[4] = flags;
      h.writeUInt32BE(stream, 5);
      return h;
    };
    // a literal with a string length running past the end of the block: not decodable
    const bad = Buffer.from([0x41, 0x7f, 0x7f]);
    const headers = Buffer.concat([frame(bad.length, 0x1, 0x4, 1), bad]);
    const data = Buffer.concat([frame(3, 0x0, 0x1, 1), Buffer.from('abc')]);
    const input = Buffer.concat([preface, frame(0, 0x4, 0, 0), headers, data]);
    const rw = new AuthorityRewriter();
    expect(rw.push(input)).toEqual(input);
    expect(rw.passingThrough).toBe(true);
  });
});
