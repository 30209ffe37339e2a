/**
 * The content-addressed image store under <stateDir>/images (layout.ts names every path). This class composes the
 * parts: the records (image-index.ts), blobs and layers (blobs.ts), where images come from (sources.ts) and how
 * they come in (ingest.ts: staged and verified under tmp/, committed last), removal and collection (gc.ts), and
 * container rootfs mounts (rootfs.ts).
 *
 * Reads take no lock; the steps that change what the records reference take the store's own lock (store-lock.ts),
 * not the engine's state-dir lock, so the CLI can list and load images beside a running app or daemon.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import type { ProcessRunner } from '../os/exec';
import { collect, usersOf } from './gc';
import { ImageIndex } from './image-index';
import type { ingest, IngestDeps } from './ingest';
import { StorePaths } from './layout';
import { HostOverlayMarks, HostRootfsMounter, type OverlayMarks, type RootfsMounter } from './overlay';
import type { ImageReference } from './reference';
import { prepareRootfs, releaseRootfs, type RootfsDeps } from './rootfs';
import { ImageStoreLock } from './store-lock';
import type { ContainerRootfs, ImageRecord, ImageStore, PullProgress, RegistryAuth } from './types';

export interface ImageStoreOptions {
  /** <stateDir>/images */
  root: string;
  runner: ProcessRunner;
  /** registries (host[:port]) spoken to over plain HTTP; loopback ones always are */
  insecureRegistries?: string[];
  /** registry host ⇒ endpoint origin its images are pulled from */
  registryMirrors?: Record<string, string>;
  marks?: OverlayMarks;
  mounter?: RootfsMounter;
  /** look only (listings): create no dirs, delete no leftovers; a missing store is empty */
  readOnly?: boolean;
}

export class LocalImageStore implements ImageStore {
  private readonly paths: StorePaths;
  private readonly index: ImageIndex;
  private readonly lock: ImageStoreLock;
  private readonly parts: IngestDeps & RootfsDeps;

  private constructor(private readonly opts: ImageStoreOptions) {
    this.paths = new StorePaths(opts.root);
    this.index = new ImageIndex(this.paths.p('images'), opts.readOnly === true);
    this.lock = new ImageStoreLock(this.paths.lockFile, opts.runner);
    this.parts = {
      paths: this.paths,
      index: this.index,
      lock: this.lock,
      marks: opts.marks ?? new HostOverlayMarks(opts.runner),
      mounter: opts.mounter ?? new HostRootfsMounter(opts.runner),
    };
  }

  get root(): string {
    return this.opts.root;
  }

  /** problems found while reading the records (a malformed record is skipped, not fatal) */
  get problems(): string[] {
    return this.index.problems;
  }

  static async open(opts: ImageStoreOptions): Promise<LocalImageStore> {
    const s = new LocalImageStore(opts);
    if (opts.readOnly !== true) await s.paths.prepare();
    await s.index.open();
    return s;
  }

  // ---- lookups (no lock: records are replaced by renames, and another process's new ones are read first) ----

  async list(): Promise<ImageRecord[]> {
    await this.index.refresh();
    return this.index.all().map((s) => structuredClone(s.record));
  }

  async resolve(ref: string): Promise<ImageRecord | undefined> {
    await this.index.refresh();
    const s = this.index.find(ref);
    return s && structuredClone(s.record);
  }

  // ---- in ----

  async pull(
    ref: string,
    opts: { auth?: RegistryAuth; signal?: AbortSignal; onProgress?: (p: PullProgress) => void } = {},
  ): Promise<ImageRecord> {
    // what brings images in (the registry client, node-tar, fzstd, the documents' schemas) is loaded on first use:
    // a verb that only lists pods opens the store without it
    const { pullImage } = await import('./sources');
    return pullImage((plan) => this.ingest(plan), ref, {
      ...opts,
      insecureRegistries: this.opts.insecureRegistries,
      registryMirrors: this.opts.registryMirrors,
    });
  }

  async load(file: string, opts: { signal?: AbortSignal } = {}): Promise<ImageRecord[]> {
    const { loadArchive } = await import('./sources');
    return loadArchive((plan) => this.ingest(plan), this.paths, file, opts.signal);
  }

  private async ingest(plan: Parameters<typeof ingest>[1]): Promise<ImageRecord> {
    this.refuseReadOnly('store images');
    const { ingest } = await import('./ingest');
    return ingest(this.parts, plan);
  }

  // ---- out ----

  /** Removes the image with all its tags, as containerd's CRI RemoveImage does; refused while a container uses it. */
  async remove(ref: string): Promise<void> {
    this.refuseReadOnly('remove images');
    await this.lock.run(async () => {
      await this.index.refresh();
      const s = this.index.find(ref);
      if (!s) return;
      const users = await usersOf(this.paths, s.record.id);
      if (users.length > 0) {
        throw new PodscopeError('FailedPrecondition', `image ${ref} (${s.record.id}) is in use by container(s) ${users.join(', ')}`, {
          details: { imageId: s.record.id, containers: users },
        });
      }
      await this.index.delete(s.record.id);
      await collect(this.paths, this.index);
    });
  }

  // ---- usage ----

  async fsInfo(): Promise<{ mountpoint: string; usedBytes: number; inodesUsed: number; timestampNs: bigint }> {
    let usedBytes = 0;
    let inodesUsed = 0;
    const seen = new Set<string>();
    const walk = async (dir: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const p = join(dir, e.name);
        const st = await lstat(p, { bigint: true }).catch(() => undefined);
        if (!st) continue;
        const key = `${st.dev}:${st.ino}`;
        if (!seen.has(key)) {
          seen.add(key);
          inodesUsed++;
          usedBytes += Number(st.blocks) * 512;
        }
        if (e.isDirectory()) await walk(p);
      }
    };
    await walk(this.opts.root);
    return { mountpoint: this.opts.root, usedBytes, inodesUsed, timestampNs: BigInt(Date.now()) * 1_000_000n };
  }

  // ---- container rootfs ----

  prepareRootfs(imageId: string, containerId: string, dir: string): Promise<ContainerRootfs> {
    return prepareRootfs(this.parts, imageId, containerId, dir);
  }

  releaseRootfs(containerId: string): Promise<void> {
    return releaseRootfs(this.parts, containerId);
  }

  private refuseReadOnly(what: string): void {
    if (this.opts.readOnly === true)
      throw new PodscopeError('FailedPrecondition', `this image store was opened read-only (for a listing) and does not ${what}`);
  }
}

export type { ImageReference };
