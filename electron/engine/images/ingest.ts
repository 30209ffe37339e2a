/**
 * The one way images come in (a registry pull, an OCI layout, a docker-save archive all end here):
 *
 * 1. stage: every new layer blob is received under tmp/ and checked against its digest (and descriptor size), and
 *    unpacked there and checked against the config's rootfs.diff_ids, with no lock held;
 * 2. commit, under the store lock: blobs and layers are renamed in, then the image record is written last.
 *
 * A crash leaves either the old store or the new image, plus at worst unreferenced blobs/layers that a later pull
 * reuses or a remove collects.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { PodscopeError } from '../../../shared/domain/errors';
import { ImageConfigSchema, type ImageConfigDoc, type LayerCompression } from '../../../shared/domain/image-spec';
import { writeFileDurable } from '../os/durable-write';
import { commitBlobs, commitLayers, layerPresent, layerSize, type StagedBlob, type StagedLayer } from './blobs';
import { parseDoc } from './documents';
import { recordOf, type ImageIndex, type StoredImage } from './image-index';
import type { StorePaths } from './layout';
import type { OverlayMarks } from './overlay';
import type { ImageStoreLock } from './store-lock';
import type { ImageRecord } from './types';
import { receiveBlob, sniffCompression, unpackLayer } from './unpack';

/** A layer to bring into the store: where its blob comes from and what it must hash to. */
export interface LayerSource {
  label: string;
  /** compressed digest when known (registries, OCI layouts); docker-save layers have none */
  digest?: string;
  size?: number;
  compression: LayerCompression | 'sniff';
  open(): Promise<Readable>;
  /** the layer file itself, when it is local and has no digest to verify (docker-save) */
  path?: string;
}

export interface IngestPlan {
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

export interface IngestDeps {
  paths: StorePaths;
  index: ImageIndex;
  lock: ImageStoreLock;
  marks: OverlayMarks;
}

interface Staged {
  layers: StagedLayer[];
  blobs: StagedBlob[];
}

export async function ingest(deps: IngestDeps, plan: IngestPlan): Promise<ImageRecord> {
  const configDoc: ImageConfigDoc = parseDoc('config', plan.config.bytes, ImageConfigSchema);
  const diffIds = configDoc.rootfs.diff_ids;
  if (diffIds.length !== plan.layers.length) {
    throw new PodscopeError(
      'InvalidArgument',
      `${plan.label}: config rootfs.diff_ids has ${diffIds.length} entries but the manifest has ${plan.layers.length} layers`,
      { details: { field: 'rootfs.diff_ids' } },
    );
  }
  for (let attempt = 1; ; attempt++) {
    const work = await deps.paths.workDir('ingest');
    try {
      const staged = await stageLayers(deps, plan, diffIds, work);
      const committed = await deps.lock.run(() => commit(deps, plan, configDoc, staged));
      if (committed !== 'retry') return committed;
      if (attempt >= 3) throw new PodscopeError('Unavailable', `${plan.label}: layers kept being removed while pulling; try again`);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}

/** Receives and unpacks, under `work`, every layer the store does not have yet; each one verified. */
async function stageLayers(deps: IngestDeps, plan: IngestPlan, diffIds: string[], work: string): Promise<Staged> {
  const staged: Staged = { layers: [], blobs: [] };
  for (const [i, layer] of plan.layers.entries()) {
    const diffId = diffIds[i]!;
    plan.signal?.throwIfAborted();
    if ((await layerPresent(deps.paths, diffId)) || staged.layers.some((l) => l.diffId === diffId)) {
      plan.progress?.(`layer ${i} ${diffId.slice(0, 19)} already present`, layer.size ?? 0, 0);
      continue;
    }
    staged.layers.push(await stageLayer(deps, plan, { index: i, layer, diffId, work }, staged.blobs));
  }
  return staged;
}

async function stageLayer(
  deps: IngestDeps,
  plan: IngestPlan,
  at: { index: number; layer: LayerSource; diffId: string; work: string },
  blobs: StagedBlob[],
): Promise<StagedLayer> {
  const { index: i, layer, diffId, work } = at;
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
    blobs.push({ digest, file: blobFile });
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
    marks: deps.marks,
    signal: plan.signal,
  });
  const meta = { diffId, size, ...(digest && { blob: digest, compression }) };
  await writeFileDurable(join(dir, 'layer.json'), JSON.stringify(meta), { mode: 0o644 });
  return { diffId, dir };
}

/** Everything verified: renames, then the record (under the store lock). 'retry' when a skipped layer is gone. */
async function commit(deps: IngestDeps, plan: IngestPlan, configDoc: ImageConfigDoc, staged: Staged): Promise<ImageRecord | 'retry'> {
  const { paths, index } = deps;
  const diffIds = configDoc.rootfs.diff_ids;
  // a layer this pull found present and skipped may have been collected by a remove since: start over
  for (const d of diffIds) {
    if (!staged.layers.some((l) => l.diffId === d) && !(await layerPresent(paths, d))) return 'retry';
  }
  plan.progress?.('committing', 0, 0);
  await commitBlobs(paths, [...plan.extraBlobs, plan.config], staged.blobs);
  await commitLayers(paths, staged.layers);
  let size = 0;
  for (const d of diffIds) size += await layerSize(paths, d);
  // another process may have written records since this one last looked: tags move off those too
  await index.refresh();
  const id = plan.config.digest;
  const previous = index.get(id);
  const record = recordOf(id, configDoc, size, previous?.record, plan);
  const blobs = [
    ...new Set([
      ...(previous?.blobs ?? []),
      plan.config.digest,
      ...plan.extraBlobs.map((b) => b.digest),
      ...staged.blobs.map((b) => b.digest),
      ...plan.layers.flatMap((l) => (l.digest ? [l.digest] : [])),
    ]),
  ];
  const stored: StoredImage = { record, blobs, ...(plan.manifestDigest && { manifestDigest: plan.manifestDigest }) };
  await index.moveTags(id, record.repoTags);
  await index.put(stored);
  return structuredClone(record);
}
