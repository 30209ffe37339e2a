/**
 * The content-addressed image store under <stateDir>/images:
 *   blobs/sha256/<hex>          manifests, configs, compressed layers (by digest)
 *   layers/<diffID hex>/fs      each layer unpacked once, overlayfs whiteouts in place (unpack.ts); layer.json beside it
 *   images/<id hex>.json        one record per image (id = config digest), written atomically
 *   users/<container id>.json   which container's rootfs uses which image (persisted: containers outlive the engine)
 *   tmp/                        work dirs of pulls and loads in flight; wiped at open
 *
 * Crash safety: everything a pull or load produces is written under tmp/ and verified there — every blob against its
 * digest (and descriptor size), every unpacked layer against the config's rootfs.diff_ids — before the first rename
 * into blobs/ or layers/. The image record is written last (temp file + fsync + rename), so a crash leaves either the
 * old store or the new image, plus at worst unreferenced blobs/layers that a later pull reuses or remove collects.
 */
import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import type { ZodError } from 'zod';
import { PodscopeError } from '../../../shared/domain/errors';
import {
  describeZodError,
  DockerSaveManifestSchema,
  ImageConfigSchema,
  IndexSchema,
  INDEX_MEDIA_TYPES,
  layerCompression,
  manifestMediaTypeProblem,
  ManifestSchema,
  type Descriptor,
  type ImageConfigDoc,
  type ImageManifest,
  type LayerCompression,
} from '../../../shared/domain/image-spec';
import { KeyedMutex } from '../sandbox/keyed-mutex';
import type { ProcessRunner } from '../os/exec';
import { HostOverlayMarks, HostRootfsMounter, type OverlayMarks, type RootfsMounter } from './overlay';
import { pickManifest } from './platform';
import { parseReference, tryParseReference, type ImageReference } from './reference';
import { RegistryClient } from './registry-client';
import type { ContainerRootfs, ImageRecord, ImageStore, PullProgress, RegistryAuth } from './types';
import { HashingStream, receiveBlob, sniffCompression, unpackLayer } from './unpack';

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
  /** look only (CLI listings beside a daemon): create no dirs, delete no leftovers; a missing store is empty */
  readOnly?: boolean;
}

interface StoredImage {
  record: ImageRecord;
  /** the manifest this image came from (absent for docker-save loads) */
  manifestDigest?: string;
  /** blobs this image holds on to: config, manifest(s), compressed layers */
  blobs: string[];
}

interface UserFile {
  imageId: string;
  dir: string;
}

/** A layer to bring into the store: where its blob comes from and what it must hash to. */
interface LayerSource {
  label: string;
  /** compressed digest when known (registries, OCI layouts); docker-save layers have none */
  digest?: string;
  size?: number;
  compression: LayerCompression | 'sniff';
  open(): Promise<Readable>;
  /** the layer file itself, when it is local and has no digest to verify (docker-save) */
  path?: string;
}

interface IngestPlan {
  label: string;
  config: { bytes: Buffer; digest: string };
  layers: LayerSource[];
  /** extra blobs to keep (manifest, index) */
  extraBlobs: { digest: string; bytes: Buffer }[];
  manifestDigest?: string;
  repoTags: string[];
  repoDigests: string[];
  signal?: AbortSignal;
  progress?: (phase: string, done: number, total: number) => void;
}

const hexOf = (digest: string) => digest.slice('sha256:'.length);
const sha256 = (b: Buffer) => {
  const h = new HashingStream();
  h.hash.update(b);
  return `sha256:${h.hash.digest('hex')}`;
};

function parseDoc<T>(
  what: string,
  bytes: Buffer,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: ZodError } },
): T {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new PodscopeError('InvalidArgument', `${what}: not valid JSON (${(e as Error).message})`, { details: { field: what } });
  }
  const r = schema.safeParse(json);
  if (!r.success) throw new PodscopeError('InvalidArgument', describeZodError(what, r.error), { details: { field: what } });
  return r.data;
}

async function writeAtomic(file: string, data: string | Buffer): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fh = await open(tmp, 'w', 0o644);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}

/** Promise.all whose error is the first failing entry's in list order, not whichever failed first in time. */
async function firstFailureInOrder<T>(promises: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/**
 * `rel` inside the archive dir, after following symlinks (docker save links shared layers with relative symlinks;
 * one pointing out of the archive must not make the store read a host file). NotFound-ish problems ⇒ InvalidArgument.
 */
async function confined(dir: string, rel: string, what: string): Promise<string> {
  const bad = (why: string) => new PodscopeError('InvalidArgument', `${what} ${JSON.stringify(rel)} ${why}`, { details: { field: what } });
  const abs = resolve(dir, rel);
  if (!abs.startsWith(dir + sep)) throw bad('points outside the archive');
  const real = await realpath(abs).catch(() => {
    throw bad('is missing from the archive');
  });
  if (!real.startsWith((await realpath(dir)) + sep)) throw bad('resolves outside the archive');
  return real;
}

export class LocalImageStore implements ImageStore {
  private readonly images = new Map<string, StoredImage>();
  private readonly lock = new KeyedMutex();
  private readonly marks: OverlayMarks;
  private readonly mounter: RootfsMounter;
  /** problems found while loading the store (a malformed record is skipped, not fatal) */
  readonly problems: string[] = [];

  private constructor(private readonly opts: ImageStoreOptions) {
    this.marks = opts.marks ?? new HostOverlayMarks(opts.runner);
    this.mounter = opts.mounter ?? new HostRootfsMounter(opts.runner);
  }

  get root(): string {
    return this.opts.root;
  }

  static async open(opts: ImageStoreOptions): Promise<LocalImageStore> {
    const s = new LocalImageStore(opts);
    await s.loadState();
    return s;
  }

  private p(...parts: string[]): string {
    return join(this.opts.root, ...parts);
  }

  private async loadState(): Promise<void> {
    const readOnly = this.opts.readOnly === true;
    if (!readOnly) {
      for (const d of ['blobs/sha256', 'layers', 'images', 'users', 'tmp']) await mkdir(this.p(d), { recursive: true, mode: 0o700 });
      // work of pulls that a crash interrupted: never referenced by an image record
      for (const name of await readdir(this.p('tmp'))) await rm(this.p('tmp', name), { recursive: true, force: true });
    }
    const names = await readdir(this.p('images')).catch((e: NodeJS.ErrnoException) => {
      if (readOnly && e.code === 'ENOENT') return [];
      throw e;
    });
    for (const name of names) {
      if (!name.endsWith('.json')) {
        if (!readOnly) await rm(this.p('images', name), { force: true });
        continue;
      }
      try {
        const stored = JSON.parse(await readFile(this.p('images', name), 'utf8')) as StoredImage;
        if (typeof stored.record?.id !== 'string' || !Array.isArray(stored.record.diffIds)) throw new Error('not an image record');
        this.images.set(stored.record.id, stored);
      } catch (e) {
        this.problems.push(`images: skipped ${name}: ${(e as Error).message}`);
      }
    }
  }

  // ---- lookups ----

  async list(): Promise<ImageRecord[]> {
    return [...this.images.values()].map((s) => structuredClone(s.record));
  }

  async resolve(ref: string): Promise<ImageRecord | undefined> {
    const s = this.find(ref);
    return s && structuredClone(s.record);
  }

  private find(ref: string): StoredImage | undefined {
    if (!ref) return undefined;
    const direct = this.images.get(ref) ?? this.images.get(`sha256:${ref}`);
    if (direct) return direct;
    const parsed = tryParseReference(ref);
    if (parsed) {
      for (const s of this.images.values()) {
        if (parsed.digest ? s.record.repoDigests.includes(parsed.canonical) : s.record.repoTags.includes(parsed.canonical)) return s;
      }
    }
    // an id prefix, as crictl and containerd accept (unique, at least 3 hex chars)
    const m = /^(?:sha256:)?([a-f0-9]{3,64})$/.exec(ref);
    if (m) {
      const hits = [...this.images.values()].filter((s) => hexOf(s.record.id).startsWith(m[1]!));
      if (hits.length === 1) return hits[0];
    }
    return undefined;
  }

  // ---- pull ----

  async pull(
    ref: string,
    opts: { auth?: RegistryAuth; signal?: AbortSignal; onProgress?: (p: PullProgress) => void } = {},
  ): Promise<ImageRecord> {
    const parsed = parseReference(ref);
    const report = (phase: string, doneBytes = 0, totalBytes = 0) => opts.onProgress?.({ ref, phase, doneBytes, totalBytes });
    report('resolving');
    const client = new RegistryClient(parsed, {
      insecureRegistries: this.opts.insecureRegistries,
      registryMirrors: this.opts.registryMirrors,
      auth: opts.auth,
      signal: opts.signal,
    });
    const top = await client.getManifest(parsed.digest ?? parsed.tag!);
    const topDigest = sha256(top.bytes);
    if (parsed.digest && topDigest !== parsed.digest) {
      throw new PodscopeError(
        'FailedPrecondition',
        `manifest for ${parsed.canonical}: content digest ${topDigest} does not match the requested ${parsed.digest}`,
        { details: { field: 'digest', expected: parsed.digest, actual: topDigest } },
      );
    }
    const extraBlobs = [{ digest: topDigest, bytes: top.bytes }];
    let manifestBytes = top.bytes;
    let manifestDigest = topDigest;
    if (isIndex(top.mediaType, top.bytes)) {
      const index = parseDoc('index', top.bytes, IndexSchema);
      const desc = pickManifest(index.manifests);
      report('manifest');
      const m = await client.getManifest(desc.digest);
      const d = sha256(m.bytes);
      if (d !== desc.digest)
        throw new PodscopeError('FailedPrecondition', `manifest ${desc.digest} (from the index): content digest ${d} does not match`, {
          details: { field: 'index.manifests[].digest', expected: desc.digest, actual: d },
        });
      manifestBytes = m.bytes;
      manifestDigest = d;
      extraBlobs.push({ digest: d, bytes: m.bytes });
    }
    const manifest = parseManifest(manifestBytes);
    report('config');
    const config = await readSmallBlob(await client.getBlob(manifest.config.digest), manifest.config, 'manifest.config');
    const total = manifest.layers.reduce((n, l) => n + l.size, 0);
    let done = 0;
    const layers: LayerSource[] = manifest.layers.map((l, i) => ({
      label: `layer ${i} (${l.digest})`,
      digest: l.digest,
      size: l.size,
      compression: layerCompression(l.mediaType)!,
      open: async () => (await client.getBlob(l.digest)).stream,
    }));
    return this.ingest({
      label: parsed.canonical,
      config: { bytes: config, digest: manifest.config.digest },
      layers,
      extraBlobs,
      manifestDigest,
      repoTags: parsed.tag && !parsed.digest ? [parsed.canonical] : [],
      repoDigests: [`${parsed.name}@${topDigest}`],
      signal: opts.signal,
      progress: (phase, n) => {
        if (phase.startsWith('layer')) done += n;
        report(phase, done, total);
      },
    }).then((rec) => {
      report('done', total, total);
      return rec;
    });
  }

  // ---- load ----

  async load(file: string, opts: { signal?: AbortSignal } = {}): Promise<ImageRecord[]> {
    const st = await stat(file).catch(() => undefined);
    if (!st) throw new PodscopeError('NotFound', `image archive ${file} does not exist`, { details: { field: 'file' } });
    const work = await mkdtemp(this.p('tmp', 'load-'));
    try {
      let dir = file;
      if (!st.isDirectory()) {
        dir = join(work, 'archive');
        await mkdir(dir);
        const { x } = await import('tar');
        try {
          // node-tar refuses absolute paths, `..` and writes through symlinks; owners are not needed here
          await x({ file, cwd: dir, preserveOwner: false, strict: true });
        } catch (e) {
          throw new PodscopeError('InvalidArgument', `${file}: not a readable tar archive (${(e as Error).message})`, { cause: e });
        }
      }
      if (await exists(join(dir, 'manifest.json'))) return await this.loadDockerSave(dir, file, opts.signal);
      if (await exists(join(dir, 'index.json'))) return await this.loadOciLayout(dir, file, opts.signal);
      throw new PodscopeError(
        'InvalidArgument',
        `${file}: neither an OCI image layout (oci-layout + index.json) nor a docker save archive (manifest.json)`,
        { details: { field: 'file' } },
      );
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  private async loadOciLayout(dir: string, file: string, signal?: AbortSignal): Promise<ImageRecord[]> {
    const blobPath = (d: string, what: string) => confined(dir, join('blobs', 'sha256', hexOf(d)), `${file}: ${what} blob`);
    const readBlob = async (desc: Descriptor, what: string) => {
      const bytes = await readFile(await blobPath(desc.digest, what));
      const d = sha256(bytes);
      if (d !== desc.digest)
        throw new PodscopeError('FailedPrecondition', `${file}: ${what} blob: content digest ${d} does not match ${desc.digest}`, {
          details: { field: `${what}.digest`, expected: desc.digest, actual: d },
        });
      return bytes;
    };
    const index = parseDoc('index.json', await readFile(join(dir, 'index.json')), IndexSchema);
    const out: ImageRecord[] = [];
    for (const [i, top] of index.manifests.entries()) {
      let desc = top;
      let bytes = await readBlob(desc, `index.json manifests[${i}]`);
      const extraBlobs = [{ digest: desc.digest, bytes }];
      if (isIndex(desc.mediaType, bytes)) {
        desc = pickManifest(parseDoc(`index.json manifests[${i}]`, bytes, IndexSchema).manifests);
        bytes = await readBlob(desc, 'manifest');
        extraBlobs.push({ digest: desc.digest, bytes });
      }
      const manifest = parseManifest(bytes);
      const config = await readBlob(manifest.config, 'manifest.config');
      const name = top.annotations?.['io.containerd.image.name'] ?? top.annotations?.['org.opencontainers.image.ref.name'];
      const ref = name && /[:/]/.test(name) ? tryParseReference(name) : undefined;
      out.push(
        await this.ingest({
          label: `${file} manifests[${i}]`,
          config: { bytes: config, digest: manifest.config.digest },
          layers: await Promise.all(
            manifest.layers.map(async (l, j) => {
              const path = await blobPath(l.digest, `manifest.layers[${j}]`);
              return {
                label: `layer ${j} (${l.digest})`,
                digest: l.digest,
                size: l.size,
                compression: layerCompression(l.mediaType)!,
                open: async () => createReadStream(path),
              };
            }),
          ),
          extraBlobs,
          manifestDigest: desc.digest,
          repoTags: ref?.tag && !ref.digest ? [ref.canonical] : [],
          repoDigests: ref ? [`${ref.name}@${top.digest}`] : [],
          signal,
        }),
      );
    }
    return out;
  }

  private async loadDockerSave(dir: string, file: string, signal?: AbortSignal): Promise<ImageRecord[]> {
    const entries = parseDoc('manifest.json', await readFile(join(dir, 'manifest.json')), DockerSaveManifestSchema);
    const out: ImageRecord[] = [];
    for (const [i, e] of entries.entries()) {
      const configBytes = await readFile(await confined(dir, e.Config, `${file}: manifest.json [${i}].Config`));
      const tags = e.RepoTags.map((t) => parseReference(t).canonical);
      out.push(
        await this.ingest({
          label: `${file} [${i}]`,
          config: { bytes: configBytes, digest: sha256(configBytes) },
          layers: await firstFailureInOrder(
            e.Layers.map(async (rel, j) => {
              const abs = await confined(dir, rel, `${file}: manifest.json [${i}].Layers[${j}]`);
              return { label: `layer ${j} (${rel})`, compression: 'sniff' as const, open: async () => createReadStream(abs), path: abs };
            }),
          ),
          extraBlobs: [],
          repoTags: tags,
          repoDigests: [],
          signal,
        }),
      );
    }
    return out;
  }

  // ---- the one way images come in ----

  private async ingest(plan: IngestPlan, attempt = 1): Promise<ImageRecord> {
    const configDoc: ImageConfigDoc = parseDoc('config', plan.config.bytes, ImageConfigSchema);
    const diffIds = configDoc.rootfs.diff_ids;
    if (diffIds.length !== plan.layers.length) {
      throw new PodscopeError(
        'InvalidArgument',
        `${plan.label}: config rootfs.diff_ids has ${diffIds.length} entries but the manifest has ${plan.layers.length} layers`,
        { details: { field: 'rootfs.diff_ids' } },
      );
    }
    const work = await mkdtemp(this.p('tmp', 'ingest-'));
    try {
      const newLayers: { diffId: string; dir: string }[] = [];
      const newBlobs: { digest: string; file: string }[] = [];
      for (const [i, layer] of plan.layers.entries()) {
        const diffId = diffIds[i]!;
        plan.signal?.throwIfAborted();
        if ((await exists(this.p('layers', hexOf(diffId), 'fs'))) || newLayers.some((l) => l.diffId === diffId)) {
          plan.progress?.(`layer ${i} ${diffId.slice(0, 19)} already present`, layer.size ?? 0, 0);
          continue;
        }
        const blobFile = join(work, `blob-${i}`);
        const label = `${plan.label}: ${layer.label}`;
        const digest = layer.digest;
        if (digest) {
          await receiveBlob({
            source: await layer.open(),
            file: blobFile,
            expectDigest: digest,
            expectSize: layer.size,
            label,
            signal: plan.signal,
            onBytes: (n) => plan.progress?.(`layer ${i} downloading`, n, 0),
          });
          newBlobs.push({ digest, file: blobFile });
        }
        // docker-save layers have no compressed digest to check: the diffID check below covers their content
        const source = digest ? blobFile : layer.path;
        if (!source) throw new PodscopeError('Internal', `${label}: no digest and no local file`);
        const compression = layer.compression === 'sniff' ? await sniffCompression(source) : layer.compression;
        const dir = join(work, `layer-${i}`);
        await mkdir(join(dir, 'fs'), { recursive: true, mode: 0o755 });
        plan.progress?.(`layer ${i} unpacking`, 0, 0);
        const { size } = await unpackLayer({
          blobPath: source,
          compression,
          expectDiffId: diffId,
          label,
          target: join(dir, 'fs'),
          marks: this.marks,
          signal: plan.signal,
        });
        await writeAtomic(join(dir, 'layer.json'), JSON.stringify({ diffId, size, ...(digest && { blob: digest, compression }) }));
        newLayers.push({ diffId, dir });
      }
      // everything verified: commit (renames, then the record) under the store lock
      const committed = await this.lock.run('store', async (): Promise<ImageRecord | 'retry'> => {
        // a layer this pull found present and skipped may have been collected by a remove since: start over
        for (const d of diffIds) {
          if (!newLayers.some((l) => l.diffId === d) && !(await exists(this.p('layers', hexOf(d), 'fs')))) return 'retry';
        }
        plan.progress?.('committing', 0, 0);
        for (const b of [...plan.extraBlobs, plan.config]) {
          const target = this.p('blobs', 'sha256', hexOf(b.digest));
          if (!(await exists(target))) await writeAtomic(target, b.bytes);
        }
        for (const b of newBlobs) {
          const target = this.p('blobs', 'sha256', hexOf(b.digest));
          if (!(await exists(target))) await rename(b.file, target);
        }
        for (const l of newLayers) {
          const target = this.p('layers', hexOf(l.diffId));
          if (await exists(join(target, 'fs'))) continue; // a concurrent pull committed the same layer first
          await rm(target, { recursive: true, force: true });
          await rename(l.dir, target);
        }
        let size = 0;
        for (const d of diffIds) size += await this.layerSize(d);
        const id = plan.config.digest;
        const previous = this.images.get(id);
        const c = configDoc.config;
        const record: ImageRecord = {
          id,
          repoTags: [...new Set([...(previous?.record.repoTags ?? []), ...plan.repoTags])],
          repoDigests: [...new Set([...(previous?.record.repoDigests ?? []), ...plan.repoDigests])],
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
          diffIds: [...diffIds],
          os: configDoc.os,
          architecture: configDoc.architecture,
          pinned: previous?.record.pinned ?? false,
          createdAt: previous?.record.createdAt ?? new Date().toISOString(),
        };
        const blobs = [
          ...new Set([
            ...(previous?.blobs ?? []),
            plan.config.digest,
            ...plan.extraBlobs.map((b) => b.digest),
            ...newBlobs.map((b) => b.digest),
            ...plan.layers.flatMap((l) => (l.digest ? [l.digest] : [])),
          ]),
        ];
        const stored: StoredImage = { record, blobs, ...(plan.manifestDigest && { manifestDigest: plan.manifestDigest }) };
        // a tag names one image: it moves off whatever image had it (that image stays, by id)
        for (const other of this.images.values()) {
          if (other.record.id === id) continue;
          const kept = other.record.repoTags.filter((t) => !record.repoTags.includes(t));
          if (kept.length !== other.record.repoTags.length) {
            const updated: StoredImage = { ...other, record: { ...other.record, repoTags: kept } };
            await writeAtomic(this.p('images', `${hexOf(other.record.id)}.json`), JSON.stringify(updated));
            this.images.set(other.record.id, updated);
          }
        }
        await writeAtomic(this.p('images', `${hexOf(id)}.json`), JSON.stringify(stored));
        this.images.set(id, stored);
        return structuredClone(record);
      });
      if (committed !== 'retry') return committed;
      if (attempt >= 3) throw new PodscopeError('Unavailable', `${plan.label}: layers kept being removed while pulling; try again`);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return this.ingest(plan, attempt + 1);
  }

  private async layerSize(diffId: string): Promise<number> {
    try {
      const meta = JSON.parse(await readFile(this.p('layers', hexOf(diffId), 'layer.json'), 'utf8')) as { size?: number };
      return meta.size ?? 0;
    } catch {
      return 0;
    }
  }

  // ---- remove ----

  private async usersOf(imageId: string): Promise<string[]> {
    const out: string[] = [];
    for (const name of await readdir(this.p('users')).catch(() => [] as string[])) {
      if (!name.endsWith('.json')) continue;
      const u = await readFile(this.p('users', name), 'utf8').then(
        (t) => JSON.parse(t) as UserFile,
        () => undefined,
      );
      if (u?.imageId === imageId) out.push(name.slice(0, -'.json'.length));
    }
    return out;
  }

  /** Removes the image with all its tags, as containerd's CRI RemoveImage does; refused while a container uses it. */
  async remove(ref: string): Promise<void> {
    await this.lock.run('store', async () => {
      const s = this.find(ref);
      if (!s) return;
      const users = await this.usersOf(s.record.id);
      if (users.length > 0) {
        throw new PodscopeError('FailedPrecondition', `image ${ref} (${s.record.id}) is in use by container(s) ${users.join(', ')}`, {
          details: { imageId: s.record.id, containers: users },
        });
      }
      await rm(this.p('images', `${hexOf(s.record.id)}.json`), { force: true });
      this.images.delete(s.record.id);
      await this.collect();
    });
  }

  /** Deletes layers and blobs no image references (call under the lock). */
  private async collect(): Promise<void> {
    const liveLayers = new Set<string>();
    const liveBlobs = new Set<string>();
    for (const s of this.images.values()) {
      for (const d of s.record.diffIds) liveLayers.add(hexOf(d));
      for (const b of s.blobs) liveBlobs.add(hexOf(b));
    }
    for (const name of await readdir(this.p('layers')))
      if (!liveLayers.has(name)) await rm(this.p('layers', name), { recursive: true, force: true });
    for (const name of await readdir(this.p('blobs', 'sha256')))
      if (!liveBlobs.has(name)) await rm(this.p('blobs', 'sha256', name), { force: true });
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

  async prepareRootfs(imageId: string, containerId: string, dir: string): Promise<ContainerRootfs> {
    if (!/^[\w.-]{1,128}$/.test(containerId))
      throw new PodscopeError('InvalidArgument', `container id ${JSON.stringify(containerId)} is not a valid name`, {
        details: { field: 'containerId' },
      });
    const s = await this.lock.run('store', async () => {
      const found = this.find(imageId);
      if (!found) throw new PodscopeError('NotFound', `image ${imageId} not found`, { details: { field: 'image' } });
      // a second mount for the same container would stack on the first and leak it
      if (await exists(this.p('users', `${containerId}.json`)))
        throw new PodscopeError('AlreadyExists', `a rootfs for container ${containerId} is already prepared (release it first)`, {
          details: { field: 'containerId' },
        });
      const user: UserFile = { imageId: found.record.id, dir };
      await writeAtomic(this.p('users', `${containerId}.json`), JSON.stringify(user));
      return found;
    });
    const target = join(dir, 'rootfs');
    try {
      const lowers: string[] = [];
      for (const d of [...s.record.diffIds].reverse()) {
        const fs = this.p('layers', hexOf(d), 'fs');
        if (!(await exists(fs))) throw new PodscopeError('Internal', `image ${s.record.id}: layer ${d} is missing from the store`);
        lowers.push(fs);
      }
      if (lowers.length === 0) {
        // overlay needs a lower dir; an image without layers gets an empty one
        await mkdir(this.p('layers', 'empty'), { recursive: true });
        lowers.push(this.p('layers', 'empty'));
      }
      for (const d of ['upper', 'work', 'rootfs']) await mkdir(join(dir, d), { recursive: true, mode: 0o755 });
      await this.mounter.mount({ lowers, upper: join(dir, 'upper'), work: join(dir, 'work'), target });
    } catch (e) {
      await this.releaseRootfs(containerId).catch(() => undefined);
      throw e;
    }
    return { path: target, release: () => this.releaseRootfs(containerId) };
  }

  /**
   * Unmounts and deletes the container's rootfs/upper/work and stops counting it as a user of its image. By
   * container id, so a restarted engine can release what an earlier one prepared. Idempotent.
   */
  async releaseRootfs(containerId: string): Promise<void> {
    const file = this.p('users', `${containerId}.json`);
    const user = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as UserFile,
      () => undefined,
    );
    if (!user) return;
    await this.mounter.unmount(join(user.dir, 'rootfs'));
    for (const d of ['rootfs', 'upper', 'work']) await rm(join(user.dir, d), { recursive: true, force: true });
    await rm(file, { force: true });
  }
}

function isIndex(mediaType: string, bytes: Buffer): boolean {
  if (INDEX_MEDIA_TYPES.includes(mediaType)) return true;
  if (mediaType && mediaType !== 'application/json' && mediaType !== 'application/octet-stream' && mediaType !== 'text/plain') return false;
  try {
    const j = JSON.parse(bytes.toString('utf8')) as { mediaType?: string; manifests?: unknown };
    return j.mediaType ? INDEX_MEDIA_TYPES.includes(j.mediaType) : Array.isArray(j.manifests);
  } catch {
    return false;
  }
}

function parseManifest(bytes: Buffer): ImageManifest {
  const m = parseDoc('manifest', bytes, ManifestSchema);
  const problem = manifestMediaTypeProblem(m);
  if (problem) throw new PodscopeError('InvalidArgument', problem, { details: { field: problem.split(':')[0] } });
  return m;
}

/** Reads a small blob (config) into memory, with its size and digest checked. */
async function readSmallBlob(blob: { stream: Readable }, desc: Descriptor, what: string): Promise<Buffer> {
  if (desc.size > 8 * 1024 * 1024)
    throw new PodscopeError('FailedPrecondition', `${what}.size ${desc.size} is over the 8 MiB config limit`, {
      details: { field: `${what}.size` },
    });
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of blob.stream) {
    n += (c as Buffer).length;
    if (n > desc.size) break;
    chunks.push(c as Buffer);
  }
  blob.stream.destroy();
  const bytes = Buffer.concat(chunks);
  const d = sha256(bytes);
  if (d !== desc.digest)
    throw new PodscopeError('FailedPrecondition', `${what}: content digest ${d} does not match ${desc.digest}; nothing was stored`, {
      details: { field: `${what}.digest`, expected: desc.digest, actual: d },
    });
  return bytes;
}

export type { ImageReference };
