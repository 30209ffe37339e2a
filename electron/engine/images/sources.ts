/**
 * Where images come from, each turned into ingest plans (ingest.ts): a registry pull (resolving an index to this
 * platform's manifest), an OCI image layout (dir or tar) and a docker-save archive. Every document read here is
 * checked against the digest that names it before anything is staged.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { DockerSaveManifestSchema, IndexSchema, layerCompression, type Descriptor } from '../../../shared/domain/image-spec';
import { exists } from './blobs';
import { hexOf, isIndex, parseDoc, parseManifest, readSmallBlob, sha256 } from './documents';
import type { IngestPlan, LayerSource } from './ingest';
import type { StorePaths } from './layout';
import { pickManifest } from './platform';
import { parseReference, tryParseReference } from './reference';
import { RegistryClient } from './registry-client';
import type { ImageRecord, PullProgress, RegistryAuth } from './types';

export type Ingest = (plan: IngestPlan) => Promise<ImageRecord>;

export interface PullOptions {
  auth?: RegistryAuth;
  signal?: AbortSignal;
  onProgress?: (p: PullProgress) => void;
  insecureRegistries?: string[];
  registryMirrors?: Record<string, string>;
}

/** Promise.all whose error is the first failing entry's in list order, not whichever failed first in time. */
async function firstFailureInOrder<T>(promises: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

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

// ---- pull ----

/** the manifest a registry reference names, through an index when it names one, each digest-checked */
async function fetchManifest(client: RegistryClient, parsed: ReturnType<typeof parseReference>, report: (phase: string) => void) {
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
  if (!isIndex(top.mediaType, top.bytes)) return { topDigest, manifestDigest: topDigest, manifestBytes: top.bytes, extraBlobs };
  const desc = pickManifest(parseDoc('index', top.bytes, IndexSchema).manifests);
  report('manifest');
  const m = await client.getManifest(desc.digest);
  const d = sha256(m.bytes);
  if (d !== desc.digest)
    throw new PodscopeError('FailedPrecondition', `manifest ${desc.digest} (from the index): content digest ${d} does not match`, {
      details: { field: 'index.manifests[].digest', expected: desc.digest, actual: d },
    });
  extraBlobs.push({ digest: d, bytes: m.bytes });
  return { topDigest, manifestDigest: d, manifestBytes: m.bytes, extraBlobs };
}

export async function pullImage(ingest: Ingest, ref: string, opts: PullOptions): Promise<ImageRecord> {
  const parsed = parseReference(ref);
  const report = (phase: string, doneBytes = 0, totalBytes = 0) => opts.onProgress?.({ ref, phase, doneBytes, totalBytes });
  report('resolving');
  const client = new RegistryClient(parsed, {
    insecureRegistries: opts.insecureRegistries,
    registryMirrors: opts.registryMirrors,
    auth: opts.auth,
    signal: opts.signal,
  });
  const { topDigest, manifestDigest, manifestBytes, extraBlobs } = await fetchManifest(client, parsed, report);
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
  const rec = await ingest({
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
  });
  report('done', total, total);
  return rec;
}

// ---- load ----

/** An OCI image layout (dir or tar) or a docker-save archive; a tar is unpacked under a work dir of the store. */
export async function loadArchive(ingest: Ingest, paths: StorePaths, file: string, signal?: AbortSignal): Promise<ImageRecord[]> {
  const st = await stat(file).catch(() => undefined);
  if (!st) throw new PodscopeError('NotFound', `image archive ${file} does not exist`, { details: { field: 'file' } });
  const work = await paths.workDir('load');
  try {
    const dir = st.isDirectory() ? file : await untar(file, join(work, 'archive'));
    if (await exists(join(dir, 'manifest.json'))) return await loadDockerSave(ingest, dir, file, signal);
    if (await exists(join(dir, 'index.json'))) return await loadOciLayout(ingest, dir, file, signal);
    throw new PodscopeError(
      'InvalidArgument',
      `${file}: neither an OCI image layout (oci-layout + index.json) nor a docker save archive (manifest.json)`,
      { details: { field: 'file' } },
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function untar(file: string, dir: string): Promise<string> {
  await mkdir(dir);
  const { x } = await import('tar');
  try {
    // node-tar refuses absolute paths, `..` and writes through symlinks; owners are not needed here
    await x({ file, cwd: dir, preserveOwner: false, strict: true });
  } catch (e) {
    throw new PodscopeError('InvalidArgument', `${file}: not a readable tar archive (${(e as Error).message})`, { cause: e });
  }
  return dir;
}

async function loadOciLayout(ingest: Ingest, dir: string, file: string, signal?: AbortSignal): Promise<ImageRecord[]> {
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
    const layers = await Promise.all(
      manifest.layers.map(async (l, j): Promise<LayerSource> => {
        const path = await blobPath(l.digest, `manifest.layers[${j}]`);
        return {
          label: `layer ${j} (${l.digest})`,
          digest: l.digest,
          size: l.size,
          compression: layerCompression(l.mediaType)!,
          open: async () => createReadStream(path),
        };
      }),
    );
    out.push(
      await ingest({
        label: `${file} manifests[${i}]`,
        config: { bytes: config, digest: manifest.config.digest },
        layers,
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

async function loadDockerSave(ingest: Ingest, dir: string, file: string, signal?: AbortSignal): Promise<ImageRecord[]> {
  const entries = parseDoc('manifest.json', await readFile(join(dir, 'manifest.json')), DockerSaveManifestSchema);
  const out: ImageRecord[] = [];
  for (const [i, e] of entries.entries()) {
    const configBytes = await readFile(await confined(dir, e.Config, `${file}: manifest.json [${i}].Config`));
    const tags = e.RepoTags.map((t) => parseReference(t).canonical);
    const layers = await firstFailureInOrder(
      e.Layers.map(async (rel, j): Promise<LayerSource> => {
        const abs = await confined(dir, rel, `${file}: manifest.json [${i}].Layers[${j}]`);
        return { label: `layer ${j} (${rel})`, compression: 'sniff' as const, open: async () => createReadStream(abs), path: abs };
      }),
    );
    out.push(
      await ingest({
        label: `${file} [${i}]`,
        config: { bytes: configBytes, digest: sha256(configBytes) },
        layers,
        extraBlobs: [],
        repoTags: tags,
        repoDigests: [],
        signal,
      }),
    );
  }
  return out;
}
