/**
 * The one image adapter (electron/endpoints/images.ts) that the app's router and the `podscope` image commands both
 * use: the local store and a CRI ImageService give the same views, inspect reads layers out of verbose info either
 * way, and loading an archive over CRI is the typed not-supported error.
 */
import { describe, expect, it } from 'vitest';
import type { CriImageApi } from '../../electron/cri/client/cri-image-api';
import { criImages, localImages } from '../../electron/endpoints/images';
import { imageVerboseInfo, imageViewOf, type ImageRecord, type ImageStore } from '../../electron/engine/api';
import { NotSupportedError } from '../../shared/domain/errors';

const rec: ImageRecord = {
  id: 'sha256:aaaa',
  repoTags: ['127.0.0.1:5000/busybox:1'],
  repoDigests: ['127.0.0.1:5000/busybox@sha256:bbbb'],
  size: 1234,
  config: { User: '1000', Cmd: ['sh'] },
  diffIds: ['sha256:l1', 'sha256:l2'],
  os: 'linux',
  architecture: 'amd64',
  pinned: false,
  createdAt: '2026-01-01T00:00:00Z',
  imageCreated: '2024-05-06T07:08:09Z',
};

/** A store holding one record (only what the adapter calls). */
function oneImageStore(): ImageStore & { removed: string[]; pulled: Array<{ ref: string; auth?: unknown }> } {
  const removed: string[] = [];
  const pulled: Array<{ ref: string; auth?: unknown }> = [];
  const resolve = async (ref: string) => (rec.id === ref || rec.repoTags.includes(ref) ? rec : undefined);
  return {
    removed,
    pulled,
    async pull(ref, opts) {
      pulled.push({ ref, auth: opts?.auth });
      opts?.onProgress?.({ ref, phase: 'done', doneBytes: 1, totalBytes: 1 });
      return rec;
    },
    load: async () => [rec],
    list: async () => [rec],
    resolve,
    async remove(ref) {
      removed.push(ref);
    },
    fsInfo: async () => ({ mountpoint: '/', usedBytes: 0, inodesUsed: 0, timestampNs: 0n }),
    prepareRootfs: async () => ({ path: '/', release: async () => {} }),
  };
}

/** A CRI ImageService client that knows the same record (as a Podscope daemon would answer). */
function criOf(): CriImageApi {
  return {
    pull: async () => ({ imageRef: rec.id }),
    list: async (ref) => (ref && ref !== rec.id ? [] : [imageViewOf(rec)]),
    async status(ref, verbose) {
      const info: Record<string, string> = verbose ? { info: imageVerboseInfo(rec) } : {};
      return ref === rec.id ? { image: imageViewOf(rec), info } : undefined;
    },
    remove: async () => {},
    fsInfo: async () => {
      throw new Error('unused');
    },
    close: () => {},
  };
}

describe('one image adapter for the app and the CLI', () => {
  it('the local store: list (all or one ref), status, inspect with layers, pull with auth and progress, load', async () => {
    const store = oneImageStore();
    const images = localImages(store);
    expect(images.where).toBe('the local image store');
    expect(await images.list()).toEqual([imageViewOf(rec)]);
    expect(await images.list('127.0.0.1:5000/busybox:1')).toEqual([imageViewOf(rec)]);
    expect(await images.list('nope')).toEqual([]);
    expect(await images.status(rec.id)).toEqual({ image: imageViewOf(rec), info: {} });
    expect(await images.status('nope')).toBeUndefined();
    expect(await images.inspect(rec.id)).toMatchObject({ layers: rec.diffIds, os: 'linux', architecture: 'amd64', config: rec.config });
    // created is the image config's (when it was built); when the store got it is apart
    expect(await images.inspect(rec.id)).toMatchObject({ createdAt: '2024-05-06T07:08:09Z', storedAt: '2026-01-01T00:00:00Z' });
    expect(await images.inspect('nope')).toBeNull();
    const phases: string[] = [];
    expect(await images.pull('busybox', { auth: { username: 'u', password: 'p' }, onProgress: (p) => phases.push(p.phase) })).toEqual(
      imageViewOf(rec),
    );
    expect(store.pulled).toEqual([{ ref: 'busybox', auth: { username: 'u', password: 'p' } }]);
    expect(phases).toEqual(['done']);
    expect(await images.load('/tmp/x.tar')).toEqual([imageViewOf(rec)]);
  });

  it('a CRI endpoint gives the same views and detail as the local store', async () => {
    const local = localImages(oneImageStore());
    const cri = criImages(async () => criOf(), 'unix:///run/x.sock');
    expect(cri.where).toBe('unix:///run/x.sock');
    expect(await cri.list()).toEqual(await local.list());
    expect(await cri.inspect(rec.id)).toEqual(await local.inspect(rec.id));
    expect(await cri.pull('busybox')).toEqual(imageViewOf(rec));
  });

  it('loading an archive over CRI is the typed not-supported error (exit code 11 in the CLI)', async () => {
    const cri = criImages(async () => criOf(), 'unix:///run/x.sock');
    const err = await cri.load('/tmp/x.tar').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotSupportedError);
    expect(err).toMatchObject({ code: 'Unimplemented', feature: 'images.load', message: expect.stringContaining('unix:///run/x.sock') });
  });
});
