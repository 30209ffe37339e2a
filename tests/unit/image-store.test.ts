/**
 * The real image store (load, records, layers, users, removal) over the testkit's fakes of its two OS touch points:
 * overlay marks any user can write and a rootfs "mount" that copies the lower dirs. What the tests above the image
 * boundary (CreateContainer, CRI ImageService, CLI, UI) rely on from it, checked here once.
 */
import { lstat, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalImageStore } from '../../electron/engine/images/store';
import { hasCode, PodscopeError } from '../../shared/domain/errors';
import { CopyingRootfsMounter, FakeOverlayMarks, noProcessRunner } from '../../testkit/fakes/fake-overlay';
import { loadTestImage } from '../../testkit/test-images';

let dir: string;
let mounter: CopyingRootfsMounter;
let store: LocalImageStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-i1-store-'));
  mounter = new CopyingRootfsMounter();
  store = await LocalImageStore.open({ root: join(dir, 'images'), runner: noProcessRunner, marks: new FakeOverlayMarks(), mounter });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the image store over the overlay fakes', () => {
  it('loads an image, shows its files in a prepared rootfs, counts users, refuses remove while in use', async () => {
    const rec = await loadTestImage(store, 'busybox:latest', { layers: [{ 'bin/hello': 'hi' }] });
    expect(await store.resolve('docker.io/library/busybox:latest')).toMatchObject({ id: rec.id });
    expect(await store.resolve('busybox')).toMatchObject({ id: rec.id });
    const r = await store.prepareRootfs('busybox', 'c1', join(dir, 'c1'));
    expect(await readFile(join(r.path, 'bin', 'hello'), 'utf8')).toBe('hi');
    expect(hasCode(await store.remove(rec.id).catch((e: unknown) => e), 'FailedPrecondition')).toBe(true);
    await r.release();
    expect(mounter.mounted.size).toBe(0);
    await store.remove('busybox');
    expect(await store.list()).toEqual([]);
  });

  it('shows layers as overlayfs does: a whiteout hides a file or directory below, an opaque directory hides all below it', async () => {
    await loadTestImage(store, 'podscope.test/layered:1', {
      layers: [
        { 'etc/gone': 'base', 'srv/dir/inside': 'base', 'var/opq/a': 'base', 'var/opq/b': 'base', 'etc/kept': 'base' },
        { 'etc/.wh.gone': '', 'srv/.wh.dir': '', 'var/opq/.wh..wh..opq': '', 'var/opq/c': 'top', 'etc/kept': 'top' },
      ],
    });
    const { path } = await store.prepareRootfs('podscope.test/layered:1', 'c1', join(dir, 'c1'));
    const present = (p: string) =>
      lstat(join(path, p)).then(
        () => true,
        () => false,
      );
    expect(await present('etc/gone')).toBe(false);
    expect(await present('srv/dir')).toBe(false);
    expect((await readdir(join(path, 'var/opq'))).sort()).toEqual(['c']);
    expect(await readFile(join(path, 'etc/kept'), 'utf8')).toBe('top');
  });

  it('a failed mount leaves no user behind, so the image can still be removed', async () => {
    await loadTestImage(store, 'podscope.test/one:1');
    mounter.mountError = new PodscopeError('RuntimeError', 'overlay mount failed');
    await expect(store.prepareRootfs('podscope.test/one:1', 'c1', join(dir, 'c1'))).rejects.toThrow('overlay mount failed');
    expect(await readdir(join(dir, 'images', 'users'))).toEqual([]);
    await store.remove('podscope.test/one:1');
    expect(await store.list()).toEqual([]);
  });

  it('a user count that cannot be written undoes the mount made beside it: nothing mounted, no rootfs dirs left', async () => {
    await loadTestImage(store, 'podscope.test/one:1');
    // a file where the users directory belongs: the durable write fails (ENOTDIR) while the mount succeeds
    await rm(join(dir, 'images', 'users'), { recursive: true, force: true });
    await writeFile(join(dir, 'images', 'users'), '');
    await expect(store.prepareRootfs('podscope.test/one:1', 'c1', join(dir, 'c1'))).rejects.toThrow(/ENOTDIR|not a directory/);
    expect(mounter.mounted.size).toBe(0);
    expect(await readdir(join(dir, 'c1')).catch(() => [])).toEqual([]);
  });
});
