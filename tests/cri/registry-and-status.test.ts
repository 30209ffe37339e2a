/**
 * Status verbose survives a CNI load failure (reported as lastCNILoadStatus, as containerd does); the endpoint
 * registry cannot add one socket twice through concurrent adds or another spelling of its path; list() on a CRI
 * endpoint sends a bounded number of PodSandboxStatus calls at once.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createCriEndpointApi, normalizeAddress } from '../../electron/cri/client';
import { LIST_STATUS_CONCURRENCY } from '../../electron/cri/client/cri-endpoint-api';
import { createEndpointRegistry } from '../../electron/endpoints';
import * as cri from '../../electron/cri';
import * as criServer from '../../electron/cri/server';
import { LOCAL_ENDPOINT_CAPABILITIES } from '../../shared/domain/endpoints';
import { PodscopeError } from '../../shared/domain/errors';
import { ENGINE_VERSION } from '../../electron/engine/service/engine';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { rawClient, rpc, tempDir } from './helpers/grpc';

let fakes: TestEngine;
let engine: TestEngine['engine'];
let server: CriServer;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir('podscope-cri-reg-');
  fakes = await createTestEngine();
  engine = fakes.engine;
  server = await startCriServer({ engine, socketPath: join(tmp.dir, 'cri.sock') });
});
afterAll(async () => {
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

describe('Status verbose when the CNI configuration cannot be loaded', () => {
  it('succeeds and says why in lastCNILoadStatus, with NetworkReady false; OK otherwise', async () => {
    const client = rawClient(server.socketPath);
    try {
      const ok = await rpc(client, (c) => c.status, { verbose: true });
      expect(ok.info.lastCNILoadStatus).toBe('OK');
      // the conf dir holds a conflist the CNI manager cannot parse: it keeps a not-ready view with the error
      const source = join(engine.options.cniConfDir, '00-x.conflist');
      await fakes.cni.writeConfFile('00-x.conflist', '{ invalid character');
      const message = expect.stringMatching(/^failed to load CNI config list file .*\/00-x\.conflist: .*: invalid cni config$/);
      const res = await rpc(client, (c) => c.status, { verbose: true });
      expect(res.status?.conditions[1]).toEqual({
        type: 'NetworkReady',
        status: false,
        reason: 'NetworkPluginNotReady',
        message: 'Network plugin returns error: cni plugin not initialized',
      });
      expect(res.info.lastCNILoadStatus).toEqual(
        expect.stringMatching(/^cni plugin not initialized; .*00-x\.conflist: failed to load CNI config list file /),
      );
      expect(res.info.lastCNILoadStatus?.startsWith(`cni plugin not initialized; ${source}: `)).toBe(true);
      expect(JSON.parse(res.info.cniconfig!)).toMatchObject({
        ready: false,
        errors: [{ source, message }],
      });
      expect(JSON.parse(res.info.config!).problems).toEqual(['CNI: cni plugin not initialized']);
    } finally {
      await fakes.cni.removeConfFile('00-x.conflist');
      client.close();
    }
  });

  it('a daemon whose CNI view cannot be read at all: cniconfig is left out, the client says FailedPrecondition', async () => {
    // The engine's own manager always has a view; this is the CRI server's path for an Engine whose cniConfig()
    // rejects (the Engine interface allows it), so the engine method itself is replaced, on this instance only.
    const e = await createTestEngine();
    e.engine.cniConfig = async () => {
      throw new PodscopeError('CniError', 'failed to load cni config: invalid character in 10-x.conflist');
    };
    const t = tempDir('podscope-cri-noview-');
    const s = await startCriServer({ engine: e.engine, socketPath: join(t.dir, 'cri.sock') });
    const client = rawClient(s.socketPath);
    try {
      const res = await rpc(client, (c) => c.status, { verbose: true });
      expect(res.status?.conditions.length).toBe(2);
      expect(res.info.lastCNILoadStatus).toBe('failed to load cni config: invalid character in 10-x.conflist');
      expect(res.info.cniconfig).toBeUndefined();
      expect(JSON.parse(res.info.config!).version).toBe(ENGINE_VERSION);
      // the client turns it into a clear error, and the registry into "no CNI config capability"
      const api = createCriEndpointApi(s.socketPath);
      try {
        await expect(api.cniConfig()).rejects.toMatchObject({
          code: 'FailedPrecondition',
          message: expect.stringContaining('invalid character in 10-x.conflist'),
        });
      } finally {
        api.close();
      }
      const reg = createEndpointRegistry({ local: engine });
      try {
        expect((await reg.add({ address: s.socketPath })).capabilities.cniConfig).toBe(false);
      } finally {
        reg.close();
      }
    } finally {
      client.close();
      await s.close();
      await e.close();
      t.cleanup();
    }
  });
});

describe('endpoint registry add', () => {
  it('two concurrent adds of one socket: one wins, the other is AlreadyExists', async () => {
    const reg = createEndpointRegistry({ local: engine });
    try {
      const results = await Promise.allSettled([
        reg.add({ address: server.socketPath }),
        reg.add({ address: `unix://${server.socketPath}` }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected?.reason).toMatchObject({ code: 'AlreadyExists' });
      expect((await reg.list()).filter((e) => e.kind === 'cri')).toHaveLength(1);
      // another spelling of the same path is the same endpoint
      const dir = server.socketPath.slice(0, server.socketPath.lastIndexOf('/'));
      await expect(reg.add({ address: `unix://${dir}//./cri.sock` })).rejects.toMatchObject({ code: 'AlreadyExists' });
    } finally {
      reg.close();
    }
  });

  it('a failed add releases its reservation', async () => {
    const reg = createEndpointRegistry({ local: engine, connectTimeoutMs: 500 });
    try {
      const missing = join(tmp.dir, 'later.sock');
      await expect(Promise.all([reg.add({ address: missing }), reg.add({ address: missing })])).rejects.toBeTruthy();
      const late = await startCriServer({ engine, socketPath: missing });
      try {
        expect((await reg.add({ address: missing })).connected).toBe(true);
      } finally {
        reg.close();
        await late.close();
      }
    } finally {
      reg.close();
    }
  });

  it('local capabilities are the shared LOCAL_ENDPOINT_CAPABILITIES (no alias exported)', async () => {
    const reg = createEndpointRegistry({ local: engine });
    // all of them but the lab: the engine over fakes streams too (through the fake container runtime), but the test
    // engine builds no CNI lab, and the flags say what the engine has, not what a full one would
    expect((await reg.list())[0]!.capabilities).toEqual({ ...LOCAL_ENDPOINT_CAPABILITIES, lab: false });
    expect('LOCAL_CAPABILITIES' in cri).toBe(false);
    reg.close();
  });

  it('one address normaliser: the server has no stripUnixScheme of its own', () => {
    expect('stripUnixScheme' in criServer).toBe(false);
    expect(normalizeAddress('unix:///run//x/../podscope.sock')).toEqual({
      address: 'unix:///run/podscope.sock',
      socketPath: '/run/podscope.sock',
    });
    expect(() => normalizeAddress('x.sock')).toThrow(/absolute/);
    expect(normalizeAddress('x.sock', { baseDir: '/run' }).socketPath).toBe('/run/x.sock');
  });
});

describe('list() on a CRI endpoint', () => {
  it(`has at most ${LIST_STATUS_CONCURRENCY} PodSandboxStatus calls in flight and still fills every IP`, async () => {
    const eFakes = await createTestEngine();
    const e = eFakes.engine;
    for (let i = 0; i < 30; i++) await e.run({ config: { metadata: { name: `p${i}`, namespace: 'n', uid: `u${i}` } } });
    let inFlight = 0;
    let maxInFlight = 0;
    const status = e.status.bind(e);
    e.status = async (id) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await new Promise((r) => setTimeout(r, 20));
        return await status(id);
      } finally {
        inFlight--;
      }
    };
    const t = tempDir('podscope-cri-list-');
    const s = await startCriServer({ engine: e, socketPath: join(t.dir, 'cri.sock') });
    const api = createCriEndpointApi(s.socketPath);
    try {
      const items = await api.list();
      expect(items).toHaveLength(30);
      // every item carries the IP the engine chose, filled from its status
      const ips = new Map((await e.list()).map((i) => [i.id, i.ip]));
      expect(items.every((i) => i.ip !== '' && i.ip === ips.get(i.id))).toBe(true);
      expect(maxInFlight).toBeGreaterThan(1);
      expect(maxInFlight).toBeLessThanOrEqual(LIST_STATUS_CONCURRENCY);
    } finally {
      api.close();
      await s.close();
      await eFakes.close();
      t.cleanup();
    }
  });
});
