/**
 * What a CRI peer sends is checked before it becomes a view: a socket that calls itself "podscope" but sends a
 * malformed verbose document is a clear Internal error naming the endpoint; the podscope-error-bin trailer carries
 * only known codes, bounded text, and only the code the call actually failed with; unreachable-socket diagnostics
 * describe the path itself (lstat), not a symlink's target.
 */
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Metadata,
  Server,
  ServerCredentials,
  status as Code,
  type sendUnaryData,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createCriEndpointApi } from '../../electron/cri/client';
import { decodeSandboxStatus } from '../../electron/cri/client/decode-status';
import { fromGrpcError, MAX_ERROR_MESSAGE_CHARS, PODSCOPE_ERROR_METADATA_KEY, toGrpcStatus } from '../../electron/cri/errors';
import { PodscopeError } from '../../shared/domain/errors';
import { tempDir } from './helpers/grpc';

const tmp = tempDir('podscope-cri-peer-');
const socketPath = join(tmp.dir, 'liar.sock');
let server: Server;

/** What the fake "podscope" peer answers; tests change it. */
const peer = {
  statusInfo: {} as Record<string, string>,
  sandboxInfo: {} as Record<string, string>,
  stopError: undefined as undefined | { code: number; details: string; trailer?: string | Buffer | string[] },
};

const sandbox = (id: string): pb.PodSandboxStatus =>
  pb.PodSandboxStatus.fromPartial({
    id,
    metadata: { name: 'n', namespace: 'ns', uid: 'u', attempt: 0 },
    state: pb.PodSandboxState.SANDBOX_READY,
    createdAt: '1',
  });

const goodSection = {
  format: 'podscope.sandbox-status/v1',
  id: 'a',
  name: 'n_ns_u_0',
  metadata: { name: 'n', namespace: 'ns', uid: 'u', attempt: 0 },
  state: 'SANDBOX_READY',
  internalState: 'Ready',
  createdAt: '2024-01-01T00:00:00Z',
  createdAtNs: '1',
  labels: {},
  annotations: {},
  runtimeHandler: '',
  hostNetwork: false,
  ip: '10.0.0.2',
  additionalIps: [],
  hostPorts: [],
  bandwidth: {},
  ipPreference: 'ipv4',
  netnsClosed: false,
  pause: { containerId: 'a', status: 'running' },
  portMappings: [],
  bandwidthAnalysis: {},
  networks: [],
  interfaces: {},
  routes: [],
  dns: [],
  trace: [],
};

beforeAll(async () => {
  const reply =
    <Res>(res: Res) =>
    (_c: ServerUnaryCall<unknown, Res>, cb: sendUnaryData<Res>) =>
      cb(null, res);
  const impl: Partial<pb.RuntimeServiceServer> = {
    version: reply({ version: '0.1.0', runtimeName: 'podscope', runtimeVersion: '6.6.6', runtimeApiVersion: 'v1' }),
    status: (_c, cb) => cb(null, { status: { conditions: [] }, info: peer.statusInfo, runtimeHandlers: [], features: undefined }),
    podSandboxStatus: (c, cb) => cb(null, { status: sandbox(c.request.podSandboxId), info: peer.sandboxInfo, timestamp: '0' }),
    listPodSandbox: reply({ items: [] }),
    stopPodSandbox: (_c, cb) => {
      const e = peer.stopError!;
      const metadata = new Metadata();
      for (const t of e.trailer === undefined ? [] : Array.isArray(e.trailer) ? e.trailer : [e.trailer])
        metadata.add(PODSCOPE_ERROR_METADATA_KEY, Buffer.isBuffer(t) ? t : Buffer.from(t));
      cb({ code: e.code, details: e.details, metadata });
    },
  };
  server = new Server();
  server.addService(pb.RuntimeServiceService, impl as UntypedServiceImplementation);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
});

afterAll(async () => {
  await new Promise<void>((r) => server.tryShutdown(() => r()));
  tmp.cleanup();
});

describe('a peer that says it is Podscope', () => {
  it('a malformed podscope status section ⇒ Internal naming the endpoint (no half-built view)', async () => {
    const api = createCriEndpointApi(socketPath);
    try {
      expect(await api.isPodscope()).toBe(true);
      peer.sandboxInfo = {
        info: JSON.stringify({
          processStatus: 'running',
          netNamespaceClosed: false,
          config: {},
          cniResult: null,
          podscope: { ...goodSection, trace: 'not-an-array' },
        }),
      };
      await expect(api.status('x')).rejects.toMatchObject({
        code: 'Internal',
        message: expect.stringMatching(new RegExp(`${socketPath} sent a Podscope sandbox status that is malformed: trace: `)),
      });
      peer.sandboxInfo = { info: JSON.stringify({ podscope: { format: 'podscope.sandbox-status/v1', id: 'x' } }) };
      await expect(api.status('x')).rejects.toMatchObject({ code: 'Internal', message: expect.stringContaining('(19 more)') });
      peer.sandboxInfo = { info: JSON.stringify({ podscope: goodSection }) };
      expect((await api.status('x')).ip).toBe('10.0.0.2');
      peer.sandboxInfo = { info: '{not json' };
      await expect(api.status('x')).rejects.toMatchObject({
        code: 'Internal',
        message: expect.stringContaining(`${socketPath} sent PodSandboxStatus verbose info that is not JSON`),
      });
      peer.sandboxInfo = { info: JSON.stringify({ cniResult: { Interfaces: { eth0: null } } }) };
      await expect(api.status('x')).rejects.toMatchObject({ code: 'Internal', message: expect.stringContaining(socketPath) });
    } finally {
      api.close();
    }
  });

  it('malformed CNI config or engine info from Status verbose ⇒ Internal naming the endpoint', async () => {
    const api = createCriEndpointApi(socketPath);
    try {
      peer.statusInfo = { config: JSON.stringify({ version: 1 }), cniconfig: JSON.stringify({ confDir: 5 }) };
      await expect(api.cniConfig()).rejects.toMatchObject({
        code: 'Internal',
        message: expect.stringMatching(new RegExp(`${socketPath}.*CNI configuration.*confDir`)),
      });
      await expect(api.info()).rejects.toMatchObject({
        code: 'Internal',
        message: expect.stringMatching(new RegExp(`${socketPath}.*engine info`)),
      });
      peer.statusInfo = { config: '[]', cniconfig: 'null' };
      await expect(api.cniConfig()).rejects.toMatchObject({ code: 'Internal' });
      await expect(api.info()).rejects.toMatchObject({ code: 'Internal' });
    } finally {
      api.close();
    }
  });

  it('decodeSandboxStatus accepts a well-formed section and drops keys it does not know', () => {
    const podscope = { ...goodSection, injected: '<script>' };
    const view = decodeSandboxStatus(
      { status: sandbox('a'), info: { info: JSON.stringify({ config: { metadata: { name: 'n' } }, podscope }) }, timestamp: '0' },
      'podscope',
      '/x.sock',
    );
    expect(view.ip).toBe('10.0.0.2');
    expect(view).not.toHaveProperty('injected');
  });
});

describe('the podscope-error-bin trailer', () => {
  const stopWith = async (e: typeof peer.stopError) => {
    peer.stopError = e;
    const api = createCriEndpointApi(socketPath);
    try {
      return (await api.stop('x').then(
        () => undefined,
        (err: unknown) => err,
      )) as PodscopeError;
    } finally {
      api.close();
    }
  };

  it('a well-formed trailer matching the status code is used', async () => {
    const err = await stopWith({
      code: Code.UNKNOWN,
      details: 'boom',
      trailer: JSON.stringify({ code: 'CniError', message: 'bridge failed', details: { code: 7 } }),
    });
    expect(err).toMatchObject({ code: 'CniError', message: 'bridge failed', details: { code: 7 } });
  });

  it('unknown codes, a code the status contradicts, non-JSON, duplicates and deep cause chains are ignored', async () => {
    const plain = { code: 'NotFound', message: 'gone' };
    for (const trailer of [
      JSON.stringify({ code: 'Pwned', message: 'x' }),
      JSON.stringify({ code: 'AlreadyExists', message: 'lies' }),
      '{nope',
      [JSON.stringify({ code: 'NotFound', message: 'a' }), JSON.stringify({ code: 'NotFound', message: 'b' })],
      JSON.stringify(
        Array.from({ length: 8 }).reduce<object>((cause) => ({ code: 'NotFound', message: 'm', cause }), {
          code: 'NotFound',
          message: 'root',
        }),
      ),
    ]) {
      expect(await stopWith({ code: Code.NOT_FOUND, details: 'gone', trailer })).toMatchObject(plain);
    }
  });

  it('an oversized trailer is ignored; a long message is cut', async () => {
    expect(
      await stopWith({
        code: Code.NOT_FOUND,
        details: 'gone',
        trailer: JSON.stringify({ code: 'NotFound', message: 'm', details: 'd'.repeat(7000) }),
      }),
    ).toMatchObject({ code: 'NotFound', message: 'gone', details: { grpcCode: Code.NOT_FOUND } });
    const long = await stopWith({
      code: Code.NOT_FOUND,
      details: 'gone',
      trailer: JSON.stringify({ code: 'NotFound', message: 'y'.repeat(5000) }),
    });
    expect(long.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS + 1);
  });

  it('the server side keeps its own trailer within the bound (huge details are dropped, code and message kept)', () => {
    const st = toGrpcStatus(new PodscopeError('CniError', 'plugin failed', { details: { stderr: 'e'.repeat(100_000) } }));
    const raw = st.metadata!.get(PODSCOPE_ERROR_METADATA_KEY)[0] as Buffer;
    expect(raw.length).toBeLessThanOrEqual(6 * 1024);
    const back = fromGrpcError(Object.assign(new Error('x'), { code: st.code!, details: st.details!, metadata: st.metadata! }), 'test');
    expect(back).toMatchObject({ code: 'CniError', message: 'plugin failed' });
  });
});

describe('unreachable-socket diagnostics', () => {
  it('a symlink is described as a symlink (lstat), not as whatever it points to', async () => {
    const file = join(tmp.dir, 'regular');
    writeFileSync(file, 'x');
    const link = join(tmp.dir, 'link.sock');
    symlinkSync(file, link);
    const api = createCriEndpointApi(link, { connectTimeoutMs: 2000 });
    try {
      await expect(api.connect()).rejects.toMatchObject({
        code: 'Unavailable',
        message: expect.stringContaining(`it is a symbolic link to ${file}`),
      });
    } finally {
      api.close();
    }
  });
});
