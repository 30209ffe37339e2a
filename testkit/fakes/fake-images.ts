/**
 * In-memory ImageStore for tests above the image boundary (CreateContainer over fakes, CRI ImageService, CLI, UI):
 * images are plain records added with `add` (or "pulled" from `registry`), and prepareRootfs copies a rootfs
 * directory you give per image into `<dir>/rootfs` instead of mounting overlayfs, so a container test can run a real
 * runc over it without a registry. Users are counted as in the real store: remove is FailedPrecondition while a
 * prepared rootfs has not been released. Finding an image and moving tags are the engine's own functions
 * (image-index.ts). For tests only: product code never imports this.
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../shared/domain/errors';
import { findImage, tagsLeftAfterMove } from '../../electron/engine/images/image-index';
import { tryParseReference } from '../../electron/engine/images/reference';
import type {
  ContainerRootfs,
  ImageRecord,
  ImageRuntimeConfig,
  ImageStore,
  PullProgress,
  RegistryAuth,
} from '../../electron/engine/images/types';

export interface FakeImageInput {
  /** default: a sha256 of the first tag */
  id?: string;
  repoTags?: string[];
  repoDigests?: string[];
  size?: number;
  config?: ImageRuntimeConfig;
  diffIds?: string[];
  pinned?: boolean;
  /** directory copied into `<dir>/rootfs` by prepareRootfs; when absent, an empty rootfs dir is created */
  rootfs?: string;
}

function fakeDigest(seed: string): string {
  // deterministic and 64 hex chars: good enough for ids in tests (not a real content digest)
  let h = 0x811c9dc5;
  let out = '';
  for (let round = 0; out.length < 64; round++) {
    for (const ch of `${seed}#${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return `sha256:${out.slice(0, 64)}`;
}

/** `busybox` ⇒ `docker.io/library/busybox:latest`: the engine's own normalization; a ref it refuses is kept as written. */
export function normalizeFakeRef(ref: string): string {
  return tryParseReference(ref)?.canonical ?? ref;
}

export class FakeImageStore implements ImageStore {
  readonly images = new Map<string, ImageRecord & { rootfs?: string }>();
  /** refs `pull` knows: ref ⇒ image input (added to the store when pulled) */
  readonly registry = new Map<string, FakeImageInput>();
  /** container id ⇒ image id, for every prepared and not yet released rootfs */
  readonly users = new Map<string, string>();
  private readonly paths = new Map<string, string>();
  readonly calls: { op: string; arg?: string }[] = [];
  /** the next pull() throws this (once) */
  pullError: Error | undefined;
  /** the next prepareRootfs() throws this (once), after leaving nothing behind */
  prepareError: Error | undefined;
  mountpoint = '/fake/images';

  add(input: FakeImageInput): ImageRecord {
    const repoTags = (input.repoTags ?? []).map(normalizeFakeRef);
    const id = input.id ?? fakeDigest(repoTags[0] ?? `image-${this.images.size}`);
    // the engine's own rules for tags moving and for finding an image (image-index.ts), so the fake cannot drift
    for (const other of this.images.values()) other.repoTags = tagsLeftAfterMove(other, id, repoTags) ?? other.repoTags;
    const rec: ImageRecord & { rootfs?: string } = {
      id,
      repoTags,
      repoDigests: input.repoDigests ?? [],
      size: input.size ?? 1024,
      config: input.config ?? { Cmd: ['sh'], Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'] },
      diffIds: input.diffIds ?? [fakeDigest(`${id}-layer`)],
      os: 'linux',
      architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
      pinned: input.pinned ?? false,
      createdAt: new Date().toISOString(),
      ...(input.rootfs !== undefined && { rootfs: input.rootfs }),
    };
    const existing = this.images.get(id);
    if (existing) rec.repoTags = [...new Set([...existing.repoTags, ...rec.repoTags])];
    this.images.set(id, rec);
    return strip(rec);
  }

  async pull(
    ref: string,
    opts: { auth?: RegistryAuth; signal?: AbortSignal; onProgress?: (p: PullProgress) => void } = {},
  ): Promise<ImageRecord> {
    this.calls.push({ op: 'pull', arg: ref });
    opts.signal?.throwIfAborted();
    const error = this.pullError;
    this.pullError = undefined;
    if (error) throw error;
    const input = this.registry.get(ref) ?? this.registry.get(normalizeFakeRef(ref));
    if (!input)
      throw new PodscopeError(
        'NotFound',
        `pull ${ref}: manifest unknown (fake registry has ${[...this.registry.keys()].join(', ') || 'nothing'})`,
      );
    opts.onProgress?.({ ref, phase: 'done', doneBytes: input.size ?? 1024, totalBytes: input.size ?? 1024 });
    return this.add({ ...input, repoTags: [...(input.repoTags ?? []), normalizeFakeRef(ref)] });
  }

  async load(file: string): Promise<ImageRecord[]> {
    this.calls.push({ op: 'load', arg: file });
    throw new PodscopeError('Unimplemented', `fake image store cannot load ${file}: use add()`);
  }

  async list(): Promise<ImageRecord[]> {
    this.calls.push({ op: 'list' });
    return [...this.images.values()].map(strip);
  }

  async resolve(ref: string): Promise<ImageRecord | undefined> {
    this.calls.push({ op: 'resolve', arg: ref });
    const rec = this.find(ref);
    return rec && strip(rec);
  }

  private find(ref: string): (ImageRecord & { rootfs?: string }) | undefined {
    return findImage(this.images, ref, (r) => r);
  }

  async remove(ref: string): Promise<void> {
    this.calls.push({ op: 'remove', arg: ref });
    const rec = this.find(ref);
    if (!rec) return;
    const users = [...this.users].filter(([, img]) => img === rec.id).map(([c]) => c);
    if (users.length > 0)
      throw new PodscopeError('FailedPrecondition', `image ${ref} is in use by container(s) ${users.join(', ')}`, {
        details: { imageId: rec.id, containers: users },
      });
    this.images.delete(rec.id);
  }

  async fsInfo(): Promise<{ mountpoint: string; usedBytes: number; inodesUsed: number; timestampNs: bigint }> {
    const usedBytes = [...this.images.values()].reduce((n, r) => n + r.size, 0);
    return { mountpoint: this.mountpoint, usedBytes, inodesUsed: this.images.size, timestampNs: BigInt(Date.now()) * 1_000_000n };
  }

  async prepareRootfs(imageId: string, containerId: string, dir: string): Promise<ContainerRootfs> {
    this.calls.push({ op: 'prepareRootfs', arg: containerId });
    const rec = this.find(imageId);
    if (!rec) throw new PodscopeError('NotFound', `image ${imageId} not found`);
    const error = this.prepareError;
    this.prepareError = undefined;
    if (error) throw error;
    const path = join(dir, 'rootfs');
    await mkdir(dir, { recursive: true });
    if (rec.rootfs !== undefined) await cp(rec.rootfs, path, { recursive: true, verbatimSymlinks: true });
    else await mkdir(path, { recursive: true });
    this.users.set(containerId, rec.id);
    this.paths.set(containerId, path);
    return { path, release: () => this.releaseRootfs(containerId) };
  }

  async releaseRootfs(containerId: string): Promise<void> {
    this.calls.push({ op: 'release', arg: containerId });
    const path = this.paths.get(containerId);
    if (path === undefined) return;
    this.paths.delete(containerId);
    await rm(path, { recursive: true, force: true });
    this.users.delete(containerId);
  }
}

function strip(rec: ImageRecord & { rootfs?: string }): ImageRecord {
  const { rootfs: _rootfs, ...out } = rec;
  return { ...out, repoTags: [...out.repoTags], repoDigests: [...out.repoDigests] };
}
