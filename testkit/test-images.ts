/**
 * Small OCI images for unit tests (a few files each, no busybox), and loading them into an image store the way a
 * user's image gets there: written as an OCI image layout and handed to the store's own `load`. Built images are
 * kept for the life of the module, so each test file builds each image once; loading one into a fresh store is a
 * few small files.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ImageRecord, ImageStore } from '../electron/engine/images/types';
import type { ImageRuntimeConfig } from '../electron/engine/runtime/oci-types';
import { assembleImage, BUSYBOX_PATH_ENV, layerTarOf, sha256Hex, writeOciLayout, type BuiltImage } from './busybox-image';

export interface TestImageSpec {
  /** the image config's `config` (default: Cmd ["sh"] and the usual PATH) */
  config?: ImageRuntimeConfig;
  /**
   * the layers, base first: path (no leading /) ⇒ content. Default: one layer holding /etc/podscope-test-image with
   * the ref, so images built for different refs have different ids.
   */
  layers?: Record<string, string | Buffer>[];
}

const built = new Map<string, BuiltImage>();

function layerTar(files: Record<string, string | Buffer>): Buffer {
  const work = mkdtempSync(join(tmpdir(), 'podscope-test-layer-'));
  try {
    const root = join(work, 'layer');
    mkdirSync(root, { mode: 0o755 });
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true, mode: 0o755 });
      writeFileSync(join(root, path), content, { mode: 0o644 });
    }
    return layerTarOf(root);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The image for `ref` built from `spec`; the same ref and spec give the same image (built once per module). */
export function buildTestImage(ref: string, spec: TestImageSpec = {}): BuiltImage {
  const key = JSON.stringify([ref, spec.config, spec.layers?.map((l) => Object.entries(l).map(([p, c]) => [p, sha256Hex(c)]))]);
  let image = built.get(key);
  if (!image) {
    const layers = spec.layers ?? [{ 'etc/podscope-test-image': `${ref}\n` }];
    image = assembleImage(layers.map(layerTar), spec.config ?? { Cmd: ['sh'], Env: [BUSYBOX_PATH_ENV] });
    built.set(key, image);
  }
  return image;
}

/** Builds (once) and loads the image into `store` through its own load path, tagged `ref`; returns the record. */
export async function loadTestImage(store: ImageStore, ref: string, spec: TestImageSpec = {}): Promise<ImageRecord> {
  const image = buildTestImage(ref, spec);
  const dir = await mkdtemp(join(tmpdir(), 'podscope-test-image-'));
  try {
    writeOciLayout({ dir }, [{ image, ref }]);
    const [record] = await store.load(dir);
    if (!record) throw new Error(`loading ${ref} gave no image`);
    return record;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
