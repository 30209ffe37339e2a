/**
 * "Not supported by this endpoint" is one typed error (NotSupportedError, code Unimplemented) mapped where every code
 * is mapped, and the endpoint registry's capability flags say beforehand what an endpoint would refuse.
 */
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../electron/cli/exit-codes';
import { fromGrpcError, toGrpcStatus } from '../../electron/cri/errors';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createUnavailableEngine } from '../../electron/engine/api';
import { createRouter } from '../../electron/ipc/router';
import { startSyntheticCri } from '../../testkit/synthetic-cri';
import { tempDir } from '../../testkit/temp-dir';
import { LOCAL_ENDPOINT_CAPABILITIES } from '../../shared/domain/endpoints';
import { NotSupportedError, deserializeError, isNotSupported, notSupported, serializeError } from '../../shared/domain/errors';

const grpcError = (code: GrpcStatus, details: string, metadata = new Metadata()): ServiceError =>
  Object.assign(new Error(details), { code, details, metadata });

describe('the one not-supported error', () => {
  it('is an Unimplemented PodscopeError naming the feature, and comes back typed from the IPC wire form', () => {
    const e = notSupported('streaming', 'this endpoint does not support exec', { endpointId: 'cri-1' });
    expect(e).toBeInstanceOf(NotSupportedError);
    expect(e).toMatchObject({ code: 'Unimplemented', feature: 'streaming', details: { feature: 'streaming', endpointId: 'cri-1' } });
    const back = deserializeError(JSON.parse(JSON.stringify(serializeError(e))));
    expect(back).toBeInstanceOf(NotSupportedError);
    expect(back).toMatchObject({ code: 'Unimplemented', feature: 'streaming', message: 'this endpoint does not support exec' });
    expect(isNotSupported(back)).toBe(true);
  });

  it('maps to gRPC UNIMPLEMENTED and back (with or without the Podscope trailer), and to exit code 11', () => {
    const st = toGrpcStatus(notSupported('images.load', 'no CRI call for it'));
    expect(st.code).toBe(GrpcStatus.UNIMPLEMENTED);
    const withTrailer = fromGrpcError(grpcError(GrpcStatus.UNIMPLEMENTED, 'no CRI call for it', st.metadata), 'unix:///x.sock');
    expect(withTrailer).toBeInstanceOf(NotSupportedError);
    expect(withTrailer).toMatchObject({ feature: 'images.load' });
    // a foreign runtime's UNIMPLEMENTED (no trailer) is the same typed error, its feature unknown
    const foreign = fromGrpcError(grpcError(GrpcStatus.UNIMPLEMENTED, 'unknown method'), 'unix:///x.sock');
    expect(foreign).toBeInstanceOf(NotSupportedError);
    expect(foreign).toMatchObject({ code: 'Unimplemented', feature: 'unknown' });
    expect(EXIT_CODES.Unimplemented).toBe(11);
  });
});

describe('capability flags', () => {
  it('the built-in engine claims every capability', () => {
    expect(LOCAL_ENDPOINT_CAPABILITIES).toMatchObject({ streaming: true, images: true, measurements: true, lab: true });
  });

  it('an engine that could not start claims none of streaming, images, measurements or the lab', async () => {
    const engine = createUnavailableEngine(new Error('no root'));
    const registry = createEndpointRegistry({ local: engine });
    try {
      const caps = registry.capabilities('local');
      expect(caps).toMatchObject({ streaming: false, images: false, measurements: false, lab: false });
      expect((await registry.list())[0]!.capabilities).toEqual(caps);
      expect(() => registry.capabilities('cri-9')).toThrow(expect.objectContaining({ code: 'NotFound' }));
    } finally {
      registry.close();
    }
  });

  it('the router answers a CRI endpoint with the not-supported error, not a probe of its methods; an unknown one with NotFound', async () => {
    const dir = tempDir('podscope-not-supported-');
    const synth = await startSyntheticCri({ socketPath: join(dir.dir, 'cri.sock'), pods: 1, events: false });
    const engine = createUnavailableEngine(new Error('no root'));
    const endpoints = createEndpointRegistry({ local: engine });
    const router = createRouter({ engine, endpoints, isTrustedSender: () => true });
    const sender = { transport: 'memory' as const, url: 'test://' };
    try {
      const added = await endpoints.add({ address: `unix://${join(dir.dir, 'cri.sock')}` });
      expect(endpoints.capabilities(added.id)).toMatchObject({ lab: false, measurements: false });
      // the lab and the measurements of a CRI runtime: the one not-supported error, naming the feature
      expect(await router.handle('lab.list', { endpointId: added.id }, sender)).toMatchObject({
        ok: false,
        error: { code: 'Unimplemented', details: { feature: 'lab' }, message: expect.stringContaining('local engine only') },
      });
      expect(await router.handle('sandbox.throughput', { endpointId: added.id, id: 'x' }, sender)).toMatchObject({
        ok: false,
        error: { code: 'Unimplemented', details: { feature: 'measurements' } },
      });
      // the lab runs on the local engine or nowhere, whatever the id; a measurement of an endpoint nobody added is
      // NotFound before anything is said about what it supports
      expect(await router.handle('lab.list', { endpointId: 'cri-9' }, sender)).toMatchObject({
        ok: false,
        error: { code: 'Unimplemented' },
      });
      expect(await router.handle('sandbox.throughput', { endpointId: 'cri-9', id: 'x' }, sender)).toMatchObject({
        ok: false,
        error: { code: 'NotFound' },
      });
      // the local stand-in has no measurements because it has no engine: Unavailable, as its every other call
      expect(await router.handle('sandbox.cniCheck', { endpointId: 'local', id: 'x' }, sender)).toMatchObject({
        ok: false,
        error: { code: 'Unavailable' },
      });
    } finally {
      router.dispose();
      endpoints.close();
      await synth.close();
      dir.cleanup();
    }
  });
});
