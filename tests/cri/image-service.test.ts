/**
 * The CRI ImageService through a real gRPC client on Podscope's socket, over the REAL image store (root: overlay,
 * whiteout nodes) pulling from the test registry on 127.0.0.1 with token auth from AuthConfig. The sandbox side is the
 * test engine's fakes; only the image store is real. Temp dirs: /tmp/podscope-i1-cri-images-*.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, Metadata, status as Code, type ServiceError } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { connectCriImages, type CriImageApi } from '../../electron/cri/client/cri-image-api';
import { LocalImageStore } from '../../electron/engine/images/store';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { buildBusyboxImage, foreignArchitecture, type BuiltImage } from '../../testkit/busybox-image';
import { startTestRegistry, type TestRegistry } from '../../testkit/registry';
import { hasCode } from '../../shared/domain/errors';

const isRoot = process.getuid?.() === 0;
let base: string;
let store: LocalImageStore;
let fakes: TestEngine;
let server: CriServer;
let registry: TestRegistry;
let client: pb.ImageServiceClient;
let api: CriImageApi;
let image: BuiltImage;
let other: BuiltImage;

type Unary<Req, Res> = (req: Req, md: Metadata, o: object, cb: (e: ServiceError | null, r: Res) => void) => unknown;
const call = <Req, Res>(m: (c: pb.ImageServiceClient) => Unary<Req, Res>, req: Req) =>
  new Promise<Res>((resolve, reject) => {
    (m(client).bind(client) as Unary<Req, Res>)(req, new Metadata(), { deadline: Date.now() + 60_000 }, (e, r) =>
      e ? reject(e) : resolve(r),
    );
  });
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 0,
    (e: ServiceError) => e.code,
  );
const spec = (image: string) => pb.ImageSpec.fromPartial({ image });

describe.skipIf(!isRoot)('CRI ImageService over the real image store', () => {
  beforeAll(async () => {
    base = await mkdtemp('/tmp/podscope-i1-cri-images-');
    image = buildBusyboxImage({ compression: 'gzip', user: '1000:1000', whiteoutLayer: true });
    other = buildBusyboxImage({ compression: 'zstd', user: 'web', files: { 'etc/other': 'x' } });
    registry = await startTestRegistry({ port: 27200, portAttempts: 100, auth: { kind: 'token', username: 'kube', password: 'pw' } });
    registry.putIndex('library/busybox', '1.36', [buildBusyboxImage({ architecture: foreignArchitecture() }), image]);
    registry.putImage('other/busybox', 'latest', other);
    store = await LocalImageStore.open({ root: join(base, 'images'), runner: new NodeProcessRunner() });
    fakes = await createTestEngine({ imageStore: store, tmpPrefix: 'podscope-i1-cri-engine-' });
    server = await startCriServer({ engine: fakes.engine, socketPath: join(base, 'cri.sock') });
    client = new pb.ImageServiceClient(`unix://${server.socketPath}`, credentials.createInsecure());
    api = await connectCriImages(`unix://${server.socketPath}`);
  });

  afterAll(async () => {
    api?.close();
    client?.close();
    await server?.close();
    await fakes?.close();
    await registry?.close();
    if (base) {
      for (const m of readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[4])
        .filter((m): m is string => !!m && m.startsWith(base))
        .reverse())
        execFileSync('umount', ['-l', m]);
      await rm(base, { recursive: true, force: true });
    }
  });

  it('PullImage with AuthConfig credentials returns the image id as image_ref; bad credentials fail FAILED_PRECONDITION', async () => {
    const ref = `${registry.host}/library/busybox:1.36`;
    expect(
      await codeOf(
        call((c) => c.pullImage, pb.PullImageRequest.fromPartial({ image: spec(ref), auth: { username: 'kube', password: 'nope' } })),
      ),
    ).toBe(Code.FAILED_PRECONDITION);
    const res = await call<pb.PullImageRequest, pb.PullImageResponse>(
      (c) => c.pullImage,
      pb.PullImageRequest.fromPartial({ image: spec(ref), auth: { username: 'kube', password: 'pw' } }),
    );
    expect(res.imageRef).toBe(image.id);
    // the base64 "auth" form crictl --creds sends is honoured too
    const res2 = await call<pb.PullImageRequest, pb.PullImageResponse>(
      (c) => c.pullImage,
      pb.PullImageRequest.fromPartial({
        image: spec(`${registry.host}/other/busybox`),
        auth: { auth: Buffer.from('kube:pw').toString('base64') },
      }),
    );
    expect(res2.imageRef).toBe(other.id);
    expect(await codeOf(call((c) => c.pullImage, pb.PullImageRequest.fromPartial({ image: spec('') })))).toBe(Code.INVALID_ARGUMENT);
    expect(
      await codeOf(
        call(
          (c) => c.pullImage,
          pb.PullImageRequest.fromPartial({
            image: spec(`${registry.host}/missing/busybox:1`),
            auth: { username: 'kube', password: 'pw' },
          }),
        ),
      ),
    ).toBe(Code.NOT_FOUND);
  });

  it('ListImages lists every image or the filtered one, with uid/username from the config User', async () => {
    const all = await call<pb.ListImagesRequest, pb.ListImagesResponse>((c) => c.listImages, { filter: undefined });
    expect(all.images.map((i) => i.id).sort()).toEqual([image.id, other.id].sort());
    const one = await call<pb.ListImagesRequest, pb.ListImagesResponse>((c) => c.listImages, {
      filter: { image: spec(`${registry.host}/library/busybox:1.36`) },
    });
    expect(one.images).toHaveLength(1);
    expect(one.images[0]).toMatchObject({
      id: image.id,
      repoTags: [`${registry.host}/library/busybox:1.36`],
      uid: { value: '1000' },
      username: '',
      size: String(image.layerTars.reduce((n, t) => n + t.length, 0)),
    });
    expect(one.images[0]!.repoDigests[0]).toMatch(/@sha256:[a-f0-9]{64}$/);
    const named = await call<pb.ListImagesRequest, pb.ListImagesResponse>((c) => c.listImages, { filter: { image: spec(other.id) } });
    expect(named.images[0]).toMatchObject({ uid: undefined, username: 'web' });
    expect(
      (await call<pb.ListImagesRequest, pb.ListImagesResponse>((c) => c.listImages, { filter: { image: spec('nothing:here') } })).images,
    ).toEqual([]);
  });

  it('ImageStatus: a missing image is an empty response, not an error; verbose carries the image spec', async () => {
    const missing = await call<pb.ImageStatusRequest, pb.ImageStatusResponse>((c) => c.imageStatus, {
      image: spec('busybox:nope'),
      verbose: true,
    });
    expect(missing).toEqual({ image: undefined, info: {} });
    const st = await call<pb.ImageStatusRequest, pb.ImageStatusResponse>((c) => c.imageStatus, {
      image: spec(image.id.slice(7, 20)),
      verbose: true,
    });
    expect(st.image?.id).toBe(image.id);
    const info = JSON.parse(st.info.info!) as { imageSpec: { config: { Cmd: string[] }; rootfs: { diff_ids: string[] } } };
    expect(info.imageSpec.config.Cmd).toEqual(['sh']);
    expect(info.imageSpec.rootfs.diff_ids).toEqual(image.diffIds);
    expect(
      (await call<pb.ImageStatusRequest, pb.ImageStatusResponse>((c) => c.imageStatus, { image: spec(image.id), verbose: false })).info,
    ).toEqual({});
  });

  it('ImageFsInfo reports the store directory with real, non-zero usage', async () => {
    const fs = await call<pb.ImageFsInfoRequest, pb.ImageFsInfoResponse>((c) => c.imageFsInfo, {});
    expect(fs.imageFilesystems).toHaveLength(1);
    expect(fs.imageFilesystems[0]!.fsId?.mountpoint).toBe(store.root);
    expect(Number(fs.imageFilesystems[0]!.usedBytes?.value)).toBeGreaterThan(1_000_000);
    expect(Number(fs.imageFilesystems[0]!.inodesUsed?.value)).toBeGreaterThan(10);
    expect(BigInt(fs.imageFilesystems[0]!.timestamp)).toBeGreaterThan(1_600_000_000_000_000_000n);
  });

  it('RemoveImage is refused (FAILED_PRECONDITION) while a container uses the image, succeeds after, and is idempotent', async () => {
    const rootfs = await store.prepareRootfs(image.id, 'cri-user', join(base, 'cri-user'));
    try {
      expect(await codeOf(call((c) => c.removeImage, { image: spec(`${registry.host}/library/busybox:1.36`) }))).toBe(
        Code.FAILED_PRECONDITION,
      );
      // the Podscope client gets the engine's exact error back
      const err = await api.remove(image.id).catch((e: unknown) => e);
      expect(hasCode(err, 'FailedPrecondition')).toBe(true);
      expect((err as Error).message).toContain('cri-user');
    } finally {
      await rootfs.release();
    }
    await call((c) => c.removeImage, { image: spec(`${registry.host}/library/busybox:1.36`) });
    expect(await api.status(image.id)).toBeUndefined();
    await call((c) => c.removeImage, { image: spec(`${registry.host}/library/busybox:1.36`) });
    expect((await api.list()).map((i) => i.id)).toEqual([other.id]);
  });
});
