/**
 * The image records (images/<id hex>.json): which images exist, their tags and digests, and which blobs each holds
 * on to. Lookups by id, id prefix, tag or digest reference.
 *
 * Another process may add or remove records (the CLI loading an image beside the app), so the index re-reads what
 * changed on disk before it answers (refresh), and a commit reloads it under the store lock before it writes.
 * A record is replaced only by a rename, so a changed inode is a changed record.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageConfigDoc } from '../../../shared/domain/image-spec';
import { writeFileDurable } from '../os/durable-write';
import { hexOf } from './digests';
import { ownerAlive } from './layout';
import { tryParseReference } from './reference';
import type { ImageRecord } from './types';

export interface StoredImage {
  record: ImageRecord;
  /** the manifest this image came from (absent for docker-save loads) */
  manifestDigest?: string;
  /** blobs this image holds on to: config, manifest(s), compressed layers */
  blobs: string[];
}

/** the pid in a temp file's name: writeFileDurable's `<file>.<pid>.<hex>.tmp`, or the older `<file>.tmp-<pid>-<rand>` */
const tempOwner = (name: string) => /\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name)?.[1] ?? /\.tmp-(\d+)-/.exec(name)?.[1] ?? '';

export class ImageIndex {
  private readonly images = new Map<string, StoredImage>();
  /** record file name ⇒ the identity (inode, size, mtime) it had when read, and the image id it held */
  private readonly seen = new Map<string, { key: string; id?: string }>();
  /** problems found while reading records (a malformed record is skipped, not fatal) */
  readonly problems: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly readOnly: boolean,
  ) {}

  /** First read: also deletes the temp files of record writes a crashed process left (never a live one's). */
  async open(): Promise<void> {
    if (!this.readOnly) {
      for (const name of await readdir(this.dir)) {
        if (!name.endsWith('.json') && !ownerAlive(tempOwner(name))) await rm(join(this.dir, name), { force: true });
      }
    }
    await this.refresh();
  }

  /** Reads the records that appeared or changed on disk since the last look, and forgets the ones removed. */
  async refresh(): Promise<void> {
    const names = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => {
      if (this.readOnly && e.code === 'ENOENT') return [];
      throw e;
    });
    const present = new Set(names.filter((n) => n.endsWith('.json')));
    for (const [name, was] of this.seen) {
      if (present.has(name)) continue;
      this.seen.delete(name);
      if (was.id) this.images.delete(was.id);
    }
    for (const name of present) await this.readRecord(name);
  }

  private async readRecord(name: string): Promise<void> {
    const file = join(this.dir, name);
    const st = await stat(file, { bigint: true }).catch(() => undefined);
    const was = this.seen.get(name);
    if (!st) {
      if (was?.id) this.images.delete(was.id);
      this.seen.delete(name);
      return;
    }
    const key = `${st.ino}:${st.size}:${st.mtimeNs}`;
    if (was?.key === key) return;
    if (was?.id) this.images.delete(was.id);
    try {
      const stored = JSON.parse(await readFile(file, 'utf8')) as StoredImage;
      if (typeof stored.record?.id !== 'string' || !Array.isArray(stored.record.diffIds)) throw new Error('not an image record');
      this.images.set(stored.record.id, stored);
      this.seen.set(name, { key, id: stored.record.id });
    } catch (e) {
      this.seen.set(name, { key });
      this.problems.push(`images: skipped ${name}: ${(e as Error).message}`);
    }
  }

  all(): StoredImage[] {
    return [...this.images.values()];
  }

  get(id: string): StoredImage | undefined {
    return this.images.get(id);
  }

  find(ref: string): StoredImage | undefined {
    return findImage(this.images, ref, (s) => s.record);
  }

  /** Writes the record (call under the store lock). */
  async put(stored: StoredImage): Promise<void> {
    const name = `${hexOf(stored.record.id)}.json`;
    await writeFileDurable(join(this.dir, name), JSON.stringify(stored), { mode: 0o644 });
    this.images.set(stored.record.id, stored);
    await this.readRecord(name).catch(() => undefined);
  }

  /** Deletes the record (call under the store lock). */
  async delete(id: string): Promise<void> {
    const name = `${hexOf(id)}.json`;
    await rm(join(this.dir, name), { force: true });
    this.images.delete(id);
    this.seen.delete(name);
  }

  /** A tag names one image: it moves off whatever other image had it (that image stays, by id). */
  async moveTags(toId: string, tags: string[]): Promise<void> {
    for (const other of this.images.values()) {
      const kept = tagsLeftAfterMove(other.record, toId, tags);
      if (kept) await this.put({ ...other, record: { ...other.record, repoTags: kept } });
    }
  }
}

/**
 * The image a reference names among `images` (keyed by id): an id, a tag or digest reference (normalized as
 * containerd does: busybox ⇒ docker.io/library/busybox:latest), or a unique id prefix of at least 3 hex chars, as
 * crictl and containerd accept. Pure, so every ImageStore (and the test kit's in-memory one) resolves alike.
 */
export function findImage<T>(images: ReadonlyMap<string, T>, ref: string, recordOf: (t: T) => ImageRecord): T | undefined {
  if (!ref) return undefined;
  const direct = images.get(ref) ?? images.get(`sha256:${ref}`);
  if (direct) return direct;
  const parsed = tryParseReference(ref);
  if (parsed) {
    for (const s of images.values()) {
      const r = recordOf(s);
      if (parsed.digest ? r.repoDigests.includes(parsed.canonical) : r.repoTags.includes(parsed.canonical)) return s;
    }
  }
  const m = /^(?:sha256:)?([a-f0-9]{3,64})$/.exec(ref);
  if (m) {
    const hits = [...images.values()].filter((s) => hexOf(recordOf(s).id).startsWith(m[1]!));
    if (hits.length === 1) return hits[0];
  }
  return undefined;
}

/** A tag names one image: the tags `other` keeps when `tags` move to image `toId`, or undefined when it keeps all. */
export function tagsLeftAfterMove(other: ImageRecord, toId: string, tags: string[]): string[] | undefined {
  if (other.id === toId) return undefined;
  const kept = other.repoTags.filter((t) => !tags.includes(t));
  return kept.length === other.repoTags.length ? undefined : kept;
}

/** The record a commit writes: what the config says, merged with what an earlier pull of the same image had. */
export function recordOf(
  id: string,
  configDoc: ImageConfigDoc,
  size: number,
  previous: ImageRecord | undefined,
  refs: { repoTags: string[]; repoDigests: string[] },
): ImageRecord {
  const c = configDoc.config;
  return {
    id,
    repoTags: [...new Set([...(previous?.repoTags ?? []), ...refs.repoTags])],
    repoDigests: [...new Set([...(previous?.repoDigests ?? []), ...refs.repoDigests])],
    size,
    config: {
      ...(c.User !== undefined && { User: c.User }),
      ...(c.ExposedPorts && { ExposedPorts: c.ExposedPorts }),
      ...(c.Env && { Env: c.Env }),
      ...(c.Entrypoint && { Entrypoint: c.Entrypoint }),
      ...(c.Cmd && { Cmd: c.Cmd }),
      ...(c.Volumes && { Volumes: c.Volumes }),
      ...(c.WorkingDir !== undefined && { WorkingDir: c.WorkingDir }),
      ...(c.Labels && { Labels: c.Labels }),
      ...(c.StopSignal !== undefined && { StopSignal: c.StopSignal }),
    },
    diffIds: [...configDoc.rootfs.diff_ids],
    os: configDoc.os,
    architecture: configDoc.architecture,
    pinned: previous?.pinned ?? false,
    createdAt: previous?.createdAt ?? new Date().toISOString(),
    ...(configDoc.created !== undefined && { imageCreated: configDoc.created }),
  };
}
