/**
 * The real image store (root only: overlay mounts, whiteout device nodes, trusted.* xattrs) against the test
 * registry on 127.0.0.1 (plain HTTP, as loopback registries are) and archives built from Debian's static busybox.
 * Everything lives under one temp dir /tmp/podscope-i1-images-*, unmounted and removed in afterAll.
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCode, PodscopeError } from '../../shared/domain/errors';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { LocalImageStore } from '../../electron/engine/images/store';
import type { ContainerRootfs, PullProgress } from '../../electron/engine/images/types';
import {
  buildBusyboxImage,
  digestOf,
  foreignArchitecture,
  MT,
  SYMLINK_EXPECTATIONS,
  WHITEOUT_EXPECTATIONS,
  writeDockerSave,
  writeOciLayout,
  type BuiltImage,
} from '../../testkit/busybox-image';
import { startTestRegistry, type TestRegistry } from '../../testkit/registry';

const isRoot = process.getuid?.() === 0;
const runner = new NodeProcessRunner();
let base: string;
let plain: TestRegistry;
let token: TestRegistry;
let basic: TestRegistry;
const rootfsToRelease: ContainerRootfs[] = [];
let gzipImage: BuiltImage;
let zstdImage: BuiltImage;
let plainImage: BuiltImage;
let foreignImage: BuiltImage;
let dockerImage: BuiltImage;

async function newStore(name: string): Promise<LocalImageStore> {
  return LocalImageStore.open({ root: join(base, name, 'images'), runner });
}

/** Every file under the store, for "nothing was committed" checks (tmp/ is scratch space and is excluded). */
async function storeTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (rel === '' && e.name === 'tmp') continue;
      out.push(`${rel}${e.name}`);
      if (e.isDirectory()) await walk(join(d, e.name), `${rel}${e.name}/`);
    }
  };
  await walk(root, '');
  return out.sort();
}

describe.skipIf(!isRoot)('image store (real overlayfs, test registry on 127.0.0.1)', () => {
  beforeAll(async () => {
    base = await mkdtemp('/tmp/podscope-i1-images-');
    gzipImage = buildBusyboxImage({ compression: 'gzip' });
    zstdImage = buildBusyboxImage({ compression: 'zstd', whiteoutLayer: true });
    plainImage = buildBusyboxImage({ compression: 'none', cmd: ['echo', 'plain'] });
    foreignImage = buildBusyboxImage({ compression: 'gzip', architecture: foreignArchitecture(), cmd: ['echo', 'foreign'] });
    dockerImage = buildBusyboxImage({ format: 'docker', whiteoutLayer: true, cmd: ['echo', 'docker'] });
    plain = await startTestRegistry({ port: 27000, portAttempts: 100 });
    token = await startTestRegistry({
      port: plain.port + 1,
      portAttempts: 100,
      auth: { kind: 'token', username: 'alice', password: 's3cret' },
    });
    basic = await startTestRegistry({
      port: token.port + 1,
      portAttempts: 100,
      auth: { kind: 'basic', username: 'bob', password: 'hunter2' },
    });
    for (const r of [plain, token, basic]) {
      r.putIndex('library/busybox', '1', [foreignImage, gzipImage]);
      r.putImage('zstd/busybox', 'whiteouts', zstdImage);
      r.putImage('plain/busybox', 'v1', plainImage);
      r.putIndex('docker/busybox', 'latest', [foreignImage, dockerImage], 'docker');
    }
  });

  afterAll(async () => {
    for (const r of rootfsToRelease) await r.release().catch(() => undefined);
    await Promise.all([plain, token, basic].map((r) => r?.close()));
    if (base) {
      // anything still mounted under our dir (a failed test) goes first
      const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[4])
        .filter((m): m is string => !!m && m.startsWith(base));
      for (const m of mounts.reverse()) execFileSync('umount', ['-l', m]);
      await rm(base, { recursive: true, force: true });
    }
  });

  it('pulls through an OCI index to this platform manifest with token auth, verifying every blob; the rootfs runs busybox', async () => {
    const store = await newStore('token');
    const progress: PullProgress[] = [];
    const started = performance.now();
    const rec = await store.pull(`${token.host}/library/busybox:1`, {
      auth: { username: 'alice', password: 's3cret' },
      onProgress: (p) => progress.push(p),
    });
    const ms = performance.now() - started;
    console.log(
      `pull busybox (${gzipImage.layers[0]!.bytes.length} B gzip layer) from the test registry with token auth: ${ms.toFixed(0)} ms`,
    );
    expect(rec.id).toBe(gzipImage.id);
    expect(rec.repoTags).toEqual([`${token.host}/library/busybox:1`]);
    expect(rec.repoDigests[0]).toMatch(new RegExp(`^${token.host}/library/busybox@sha256:[a-f0-9]{64}$`));
    expect(rec.diffIds).toEqual(gzipImage.diffIds);
    expect(rec.config.Cmd).toEqual(['sh']);
    expect(rec.architecture).toBe(gzipImage.architecture);
    expect(rec.size).toBe(gzipImage.layerTars[0]!.length);
    // the foreign platform's manifest and config were never fetched
    expect(token.requests.some((r) => r.path.includes(foreignImage.manifest.digest) || r.path.includes(foreignImage.config.digest))).toBe(
      false,
    );
    expect(
      token.requests
        .filter((r) => r.path.includes('/manifests/'))
        .every((r) => String(r.headers.accept).includes(MT.ociIndex) && String(r.headers.accept).includes(MT.dockerManifest)),
    ).toBe(true);
    expect(token.issuedTokens.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ phase: 'done' });
    expect(progress.some((p) => p.phase.includes('downloading') && p.doneBytes > 0)).toBe(true);

    const rootfs = await store.prepareRootfs(rec.id, 'c-token', join(base, 'token', 'c-token'));
    rootfsToRelease.push(rootfs);
    const out = execFileSync('chroot', [rootfs.path, '/bin/sh', '-c', 'echo hello from $(readlink /bin/sh)']).toString();
    expect(out.trim()).toBe('hello from busybox');
    // symlink targets are kept verbatim (absolute, and climbing above the root), and resolve inside the container
    for (const l of Object.values(SYMLINK_EXPECTATIONS)) {
      expect(readlinkSync(join(rootfs.path, l.path))).toBe(l.target);
      expect(
        execFileSync('chroot', [rootfs.path, `/${l.path}`, '-c', 'echo via link'])
          .toString()
          .trim(),
      ).toBe('via link');
    }
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(` ${rootfs.path} `);
    await rootfs.release();
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${rootfs.path} `);
    expect(existsSync(rootfs.path)).toBe(false);
    await rootfs.release(); // idempotent
  });

  it('refuses a token registry without credentials, naming the registry', async () => {
    const store = await newStore('token-nocreds');
    const err = await store.pull(`${token.host}/library/busybox:1`).catch((e: unknown) => e);
    expect(hasCode(err, 'FailedPrecondition')).toBe(true);
    expect((err as Error).message).toContain(token.host);
    expect(await store.list()).toEqual([]);
  });

  it('pulls with basic auth, and refuses wrong basic credentials', async () => {
    const store = await newStore('basic');
    const wrong = await store
      .pull(`${basic.host}/plain/busybox:v1`, { auth: { auth: Buffer.from('bob:wrong').toString('base64') } })
      .catch((e: unknown) => e);
    expect(hasCode(wrong, 'FailedPrecondition')).toBe(true);
    expect((wrong as Error).message).toMatch(/unauthorized.*as bob/);
    const rec = await store.pull(`${basic.host}/plain/busybox:v1`, { auth: { auth: Buffer.from('bob:hunter2').toString('base64') } });
    expect(rec.id).toBe(plainImage.id);
    expect(rec.config.Cmd).toEqual(['echo', 'plain']);
    expect(basic.requests.some((r) => String(r.headers.authorization).startsWith('Basic '))).toBe(true);
  });

  it('unpacks zstd layers and applies whiteouts (deleted file, deleted dir, opaque dir) through overlayfs', async () => {
    const store = await newStore('zstd');
    const rec = await store.pull(`${plain.host}/zstd/busybox:whiteouts`);
    expect(rec.diffIds).toEqual(zstdImage.diffIds);
    const w = WHITEOUT_EXPECTATIONS;
    // the layer dir holds overlayfs's own whiteout format
    const layer2 = join(store.root, 'layers', zstdImage.diffIds[1]!.slice(7), 'fs');
    const dev = await lstat(join(layer2, w.deletedFile));
    expect(dev.isCharacterDevice() && dev.rdev === 0).toBe(true);
    const rootfs = await store.prepareRootfs(rec.id, 'c-zstd', join(base, 'zstd', 'c-zstd'));
    rootfsToRelease.push(rootfs);
    const has = (p: string) => existsSync(join(rootfs.path, p));
    expect(has('bin/busybox')).toBe(true);
    expect(has(w.deletedFile)).toBe(false);
    expect(has(w.deletedDir)).toBe(false);
    for (const f of w.hiddenByOpaque) expect(has(f)).toBe(false);
    expect(has(w.keptInOpaque)).toBe(true);
    expect(has(w.addedFile)).toBe(true);
    // writes go to the container's upper dir, never into the shared layer
    execFileSync('chroot', [rootfs.path, '/bin/sh', '-c', 'echo x > /etc/passwd-copy; rm /etc/passwd']);
    expect(existsSync(join(store.root, 'layers', zstdImage.diffIds[0]!.slice(7), 'fs', 'etc/passwd'))).toBe(true);
    await rootfs.release();
  });

  it('resolves a Docker manifest list and a Docker v2 manifest with docker media types', async () => {
    const store = await newStore('docker');
    const rec = await store.pull(`${plain.host}/docker/busybox`);
    expect(rec.id).toBe(dockerImage.id);
    expect(rec.repoTags).toEqual([`${plain.host}/docker/busybox:latest`]);
    expect(await store.resolve(`${plain.host}/docker/busybox:latest`)).toMatchObject({ id: dockerImage.id });
    expect(await store.resolve(rec.repoDigests[0]!)).toMatchObject({ id: dockerImage.id });
    expect(await store.resolve(dockerImage.id.slice(7, 19))).toMatchObject({ id: dockerImage.id });
    expect(await store.resolve('sha256:0000')).toBeUndefined();
  });

  it('refuses a corrupted layer blob naming its digest, and commits nothing', async () => {
    const store = await newStore('corrupt');
    await store.pull(`${plain.host}/plain/busybox:v1`);
    const before = await storeTree(store.root);
    // its own layer content: a layer the store already has (same diffID) would not be fetched at all
    const bad = buildBusyboxImage({ compression: 'gzip', files: { 'etc/corrupt': 'x' } });
    plain.putImage('corrupt/busybox', 'v1', bad);
    plain.corruptBlob(bad.layers[0]!.digest);
    const err = await store.pull(`${plain.host}/corrupt/busybox:v1`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodscopeError);
    expect((err as Error).message).toContain(bad.layers[0]!.digest);
    expect((err as Error).message).toMatch(/does not match/);
    expect(await storeTree(store.root)).toEqual(before);
    expect(await readdir(join(store.root, 'tmp'))).toEqual([]);
    expect((await store.list()).map((i) => i.id)).toEqual([plainImage.id]);
  });

  it('a pull canceled mid-download (AbortSignal) fails Canceled and commits nothing', async () => {
    const store = await newStore('cancel');
    const big = buildBusyboxImage({ compression: 'none', files: { 'etc/cancel': 'x' } });
    plain.putImage('cancel/busybox', 'v1', big);
    const before = await storeTree(store.root);
    const ac = new AbortController();
    const err = await store
      .pull(`${plain.host}/cancel/busybox:v1`, {
        signal: ac.signal,
        onProgress: (p) => {
          if (p.phase.includes('downloading')) ac.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(hasCode(err, 'Canceled')).toBe(true);
    expect(await storeTree(store.root)).toEqual(before);
    expect(await readdir(join(store.root, 'tmp'))).toEqual([]);
    expect(await store.resolve(`${plain.host}/cancel/busybox:v1`)).toBeUndefined();
  });

  it('refuses a layer whose content does not match the config diff_ids, and commits nothing', async () => {
    const store = await newStore('diffid');
    const good = buildBusyboxImage({ compression: 'gzip', cmd: ['echo', 'diffid'] });
    const other = buildBusyboxImage({ compression: 'gzip', files: { 'etc/other': 'x' } });
    // a manifest whose layer is a valid blob, but not the layer the config promises
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MT.ociManifest,
        config: { mediaType: MT.ociConfig, digest: good.config.digest, size: good.config.bytes.length },
        layers: [{ mediaType: MT.ociLayerGzip, digest: other.layers[0]!.digest, size: other.layers[0]!.bytes.length }],
      }),
    );
    plain.putBlob('diffid/busybox', good.config.digest, good.config.bytes);
    plain.putBlob('diffid/busybox', other.layers[0]!.digest, other.layers[0]!.bytes);
    plain.putRawManifest('diffid/busybox', 'v1', MT.ociManifest, manifest);
    const before = await storeTree(store.root);
    const err = await store.pull(`${plain.host}/diffid/busybox:v1`).catch((e: unknown) => e);
    expect(hasCode(err, 'FailedPrecondition')).toBe(true);
    expect((err as Error).message).toContain('rootfs.diff_ids');
    expect((err as Error).message).toContain(good.diffIds[0]!);
    expect(await storeTree(store.root)).toEqual(before);
  });

  it('refuses manifests with an unsupported layer media type or a bad config digest, naming the field', async () => {
    const store = await newStore('badmanifest');
    const m = JSON.parse(gzipImage.manifest.bytes.toString()) as { layers: { mediaType: string }[]; config: { digest: string } };
    m.layers[0]!.mediaType = 'application/x-foo';
    plain.putRawManifest('bad/busybox', 'mt', MT.ociManifest, Buffer.from(JSON.stringify(m)));
    const e1 = await store.pull(`${plain.host}/bad/busybox:mt`).catch((e: unknown) => e);
    expect(hasCode(e1, 'InvalidArgument')).toBe(true);
    expect((e1 as Error).message).toContain('manifest.layers[0].mediaType');
    expect((e1 as Error).message).toContain('application/x-foo');

    const m2 = JSON.parse(gzipImage.manifest.bytes.toString()) as { config: { digest: string } };
    m2.config.digest = 'sha256:nothex';
    plain.putRawManifest('bad/busybox', 'cfg', MT.ociManifest, Buffer.from(JSON.stringify(m2)));
    const e2 = await store.pull(`${plain.host}/bad/busybox:cfg`).catch((e: unknown) => e);
    expect(hasCode(e2, 'InvalidArgument')).toBe(true);
    expect((e2 as Error).message).toContain('manifest.config.digest');

    const e3 = await store.pull(`${plain.host}/nope/busybox:1`).catch((e: unknown) => e);
    expect(hasCode(e3, 'NotFound')).toBe(true);
    expect(await store.list()).toEqual([]);
  });

  it('loads an OCI image layout (dir and tar) and a docker save archive', async () => {
    const store = await newStore('load');
    const layoutDir = writeOciLayout({ dir: join(base, 'layout') }, [{ image: zstdImage, ref: 'podscope.local/zstd:1' }]);
    const fromDir = await store.load(layoutDir);
    expect(fromDir.map((r) => [r.id, r.repoTags])).toEqual([[zstdImage.id, ['podscope.local/zstd:1']]]);

    const layoutTar = writeOciLayout({ tarFile: join(base, 'layout.tar') }, [{ image: plainImage, ref: 'podscope.local/plain:2' }]);
    const fromTar = await store.load(layoutTar);
    expect(fromTar.map((r) => [r.id, r.repoTags])).toEqual([[plainImage.id, ['podscope.local/plain:2']]]);

    const saved = writeDockerSave(join(base, 'saved.tar'), [{ image: dockerImage, repoTags: ['busybox:saved'] }]);
    const fromSave = await store.load(saved);
    expect(fromSave.map((r) => [r.id, r.repoTags])).toEqual([[dockerImage.id, ['docker.io/library/busybox:saved']]]);
    expect(await store.resolve('busybox:saved')).toMatchObject({ id: dockerImage.id });

    const rootfs = await store.prepareRootfs(dockerImage.id, 'c-load', join(base, 'load', 'c-load'));
    rootfsToRelease.push(rootfs);
    expect(existsSync(join(rootfs.path, WHITEOUT_EXPECTATIONS.addedFile))).toBe(true);
    expect(existsSync(join(rootfs.path, WHITEOUT_EXPECTATIONS.deletedFile))).toBe(false);
    await rootfs.release();

    // a docker save whose layer is a symlink out of the archive must not make the store read a host file
    const evilDir = join(base, 'evil');
    execFileSync('mkdir', ['-p', join(evilDir, 'l')]);
    // relative: node-tar (strict) already refuses absolute link targets
    execFileSync('ln', ['-s', '../../../../../../../../etc/hostname', join(evilDir, 'l', 'layer.tar')]);
    writeFileSync(join(evilDir, `${dockerImage.id.slice(7)}.json`), dockerImage.config.bytes);
    writeFileSync(
      join(evilDir, 'manifest.json'),
      JSON.stringify([{ Config: `${dockerImage.id.slice(7)}.json`, RepoTags: ['evil:1'], Layers: ['l/layer.tar', 'l/layer.tar'] }]),
    );
    execFileSync('tar', ['-C', evilDir, '-cf', join(base, 'evil.tar'), '.']);
    const evilTar = await store.load(join(base, 'evil.tar')).catch((e: unknown) => e);
    expect(hasCode(evilTar, 'InvalidArgument')).toBe(true); // node-tar refuses to extract the escaping link
    expect((evilTar as Error).message).toMatch(/linkpath escapes extraction directory/);
    const evilDir2 = await store.load(evilDir).catch((e: unknown) => e); // an unpacked archive: the store's own check
    expect(hasCode(evilDir2, 'InvalidArgument')).toBe(true);
    expect((evilDir2 as Error).message).toMatch(/Layers\[0\] "l\/layer.tar" resolves outside the archive/);
    expect(await store.resolve('evil:1')).toBeUndefined();

    const junk = join(base, 'junk.tar');
    execFileSync('tar', ['-C', join(base, 'layout'), '-cf', junk, 'oci-layout']);
    const err = await store.load(junk).catch((e: unknown) => e);
    expect(hasCode(err, 'InvalidArgument')).toBe(true);
    expect((err as Error).message).toMatch(/neither an OCI image layout/);
  });

  it('lists, removes (refused while a container uses the image), collects unshared layers, and reports usage', async () => {
    const store = await newStore('remove');
    const a = await store.pull(`${plain.host}/library/busybox:1`);
    const unique = buildBusyboxImage({ compression: 'none', files: { 'etc/unique': 'x' } });
    plain.putImage('unique/busybox', 'v1', unique);
    const b = await store.pull(`${plain.host}/unique/busybox:v1`);
    expect((await store.list()).map((i) => i.id).sort()).toEqual([a.id, b.id].sort());
    const usage = await store.fsInfo();
    expect(usage.mountpoint).toBe(store.root);
    expect(usage.usedBytes).toBeGreaterThan(gzipImage.layerTars[0]!.length);
    expect(usage.inodesUsed).toBeGreaterThan(10);

    const rootfs = await store.prepareRootfs(a.id, 'c-busy', join(base, 'remove', 'c-busy'));
    rootfsToRelease.push(rootfs);
    expect(
      hasCode(await store.prepareRootfs(a.id, 'c-busy', join(base, 'remove', 'c-busy2')).catch((e: unknown) => e), 'AlreadyExists'),
    ).toBe(true);
    const refused = await store.remove(`${plain.host}/library/busybox:1`).catch((e: unknown) => e);
    expect(hasCode(refused, 'FailedPrecondition')).toBe(true);
    expect((refused as Error).message).toContain('c-busy');
    // a restarted engine still knows the user (persisted), and can release it by container id
    const reopened = await newStore('remove');
    expect(hasCode(await reopened.remove(a.id).catch((e: unknown) => e), 'FailedPrecondition')).toBe(true);
    await reopened.releaseRootfs('c-busy');
    expect(existsSync(rootfs.path)).toBe(false);
    await reopened.remove(a.id);
    expect(await reopened.resolve(a.id)).toBeUndefined();
    await reopened.remove(a.id); // idempotent
    // the two images share no layer: a's layer is gone, b's stays
    expect(existsSync(join(store.root, 'layers', gzipImage.diffIds[0]!.slice(7)))).toBe(false);
    expect(existsSync(join(store.root, 'layers', unique.diffIds[0]!.slice(7), 'fs', 'bin/busybox'))).toBe(true);
    expect(existsSync(join(store.root, 'blobs/sha256', gzipImage.config.digest.slice(7)))).toBe(false);
    expect((await reopened.list()).map((i) => i.id)).toEqual([b.id]);
  });

  it('unpacks a layer once when two images share it', async () => {
    const store = await newStore('shared');
    await store.pull(`${plain.host}/zstd/busybox:whiteouts`);
    const layerDir = join(store.root, 'layers', zstdImage.diffIds[0]!.slice(7));
    const born = (await stat(layerDir)).ino;
    // same base layer content, but different compression ⇒ same diffID, different blob
    const same = buildBusyboxImage({ compression: 'gzip', cmd: ['echo', 'shares-base'] });
    expect(same.diffIds[0]).toBe(zstdImage.diffIds[0]);
    plain.putImage('shared/busybox', 'v1', same);
    const before = plain.requests.length;
    await store.pull(`${plain.host}/shared/busybox:v1`);
    expect(plain.requests.slice(before).some((r) => r.path.includes(same.layers[0]!.digest))).toBe(false);
    expect((await stat(layerDir)).ino).toBe(born);
    expect(digestOf(same.layerTars[0]!)).toBe(same.diffIds[0]);
  });
});
