/**
 * Images as the app's Images page and "Add container" see them, from the local store or any CRI endpoint's
 * ImageService. Layers and config come from ImageStatus verbose info (info["info"] holds the OCI image spec with
 * rootfs.diff_ids in both containerd's and Podscope's answer); an endpoint that gives no verbose info still lists.
 */
import type { ImageDetail, ImagePullProgress, ImageView } from '../../shared/domain/streams';
import type { CriImageApi, ImageSummary } from '../cri/client/cri-image-api';
import { imageVerboseInfo, imageViewOf, type ImageStore } from '../engine/api';

export interface EndpointImages {
  list(): Promise<ImageView[]>;
  inspect(ref: string): Promise<ImageDetail | null>;
  /** onProgress is called only where the runtime reports progress (the local store; CRI PullImage has none) */
  pull(ref: string, onProgress?: (p: ImagePullProgress) => void): Promise<ImageView>;
  remove(ref: string): Promise<void>;
}

const fromSummary = (s: ImageSummary): ImageView => ({ ...s });

/** Reads layers and config out of verbose info; tolerant of runtimes that put other shapes there. */
export function detailFromInfo(image: ImageView, info: Record<string, string>): ImageDetail {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = info.info ? (JSON.parse(info.info) as Record<string, unknown>) : {};
  } catch {
    // not JSON: shown raw under "info"
  }
  const spec = (parsed.imageSpec ?? {}) as {
    os?: string;
    architecture?: string;
    created?: string;
    config?: unknown;
    rootfs?: { diff_ids?: unknown };
  };
  const layers = Array.isArray(spec.rootfs?.diff_ids)
    ? (spec.rootfs.diff_ids as unknown[]).map(String)
    : Array.isArray(parsed.diffIds)
      ? (parsed.diffIds as unknown[]).map(String)
      : [];
  const detail: ImageDetail = { image, layers, info };
  const os = spec.os ?? (parsed.os as string | undefined);
  const arch = spec.architecture ?? (parsed.architecture as string | undefined);
  const created = (parsed.createdAt as string | undefined) ?? spec.created;
  if (os) detail.os = os;
  if (arch) detail.architecture = arch;
  if (created) detail.createdAt = created;
  if (spec.config && typeof spec.config === 'object') detail.config = spec.config as Record<string, unknown>;
  return detail;
}

export function localImages(store: ImageStore): EndpointImages {
  return {
    list: async () => (await store.list()).map(imageViewOf),
    async inspect(ref) {
      const rec = await store.resolve(ref);
      if (!rec) return null;
      return detailFromInfo(imageViewOf(rec), { info: imageVerboseInfo(rec) });
    },
    async pull(ref, onProgress) {
      const rec = await store.pull(ref, onProgress ? { onProgress } : {});
      return imageViewOf(rec);
    },
    remove: (ref) => store.remove(ref),
  };
}

export function criImages(api: () => Promise<CriImageApi>): EndpointImages {
  return {
    list: async () => (await (await api()).list()).map(fromSummary),
    async inspect(ref) {
      const res = await (await api()).status(ref, true);
      return res ? detailFromInfo(fromSummary(res.image), res.info) : null;
    },
    async pull(ref) {
      const cri = await api();
      const { imageRef } = await cri.pull(ref);
      const res = await cri.status(imageRef);
      return res ? fromSummary(res.image) : { id: imageRef, repoTags: [ref], repoDigests: [], size: 0, pinned: false, username: '' };
    },
    remove: async (ref) => (await api()).remove(ref),
  };
}
