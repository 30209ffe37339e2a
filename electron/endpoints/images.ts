/**
 * The one image adapter: images as the app's Images page, "Add container" and the `podscope` image commands see
 * them, from the local store or any CRI endpoint's ImageService. Layers and config come from ImageStatus verbose info
 * (info["info"] holds the OCI image spec with rootfs.diff_ids in both containerd's and Podscope's answer); an
 * endpoint that gives no verbose info still lists. Loading an archive exists only locally: CRI has no call for it.
 */
import type { ImageDetail, ImagePullProgress, ImageView } from '../../shared/domain/streams';
import { notSupported } from '../../shared/domain/errors';
import type { CriImageApi } from '../cri/client/cri-image-api';
import { imageVerboseInfo, imageViewOf, type ImageStore, type RegistryAuth } from '../engine/api';

export interface ImageStatus {
  image: ImageView;
  /** ImageStatus verbose info (empty unless asked for) */
  info: Record<string, string>;
}

export interface EndpointImages {
  /** where the images live, for messages: "the local image store" or the endpoint's address */
  readonly where: string;
  /** every image, or only the one `ref` names */
  list(ref?: string): Promise<ImageView[]>;
  /** undefined when the endpoint does not have it */
  status(ref: string, verbose?: boolean): Promise<ImageStatus | undefined>;
  /** status with verbose info read into layers and config; null when absent */
  inspect(ref: string): Promise<ImageDetail | null>;
  /** onProgress is called only where the runtime reports progress (the local store; CRI PullImage has none) */
  pull(ref: string, opts?: { auth?: RegistryAuth; onProgress?: (p: ImagePullProgress) => void }): Promise<ImageView>;
  remove(ref: string): Promise<void>;
  /** an OCI layout or `docker save` archive; NotSupportedError over CRI */
  load(file: string): Promise<ImageView[]>;
}

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
  // the built-in store's verbose info has its own createdAt: when it stored the image, not when the image was made
  const stored = parsed.createdAt as string | undefined;
  if (os) detail.os = os;
  if (arch) detail.architecture = arch;
  if (spec.created) detail.createdAt = spec.created;
  if (stored) detail.storedAt = stored;
  if (spec.config && typeof spec.config === 'object') detail.config = spec.config as Record<string, unknown>;
  return detail;
}

/** What differs between the local store and a CRI ImageService; inspect is derived once from status. */
type ImageSource = Omit<EndpointImages, 'inspect'>;

function adapt(source: ImageSource): EndpointImages {
  return {
    ...source,
    async inspect(ref) {
      const st = await source.status(ref, true);
      return st ? detailFromInfo(st.image, st.info) : null;
    },
  };
}

export function localImages(store: ImageStore, where = 'the local image store'): EndpointImages {
  return adapt({
    where,
    async list(ref) {
      if (ref === undefined) return (await store.list()).map(imageViewOf);
      const rec = await store.resolve(ref);
      return rec ? [imageViewOf(rec)] : [];
    },
    async status(ref, verbose = false) {
      const rec = await store.resolve(ref);
      if (!rec) return undefined;
      const info: Record<string, string> = verbose ? { info: imageVerboseInfo(rec) } : {};
      return { image: imageViewOf(rec), info };
    },
    async pull(ref, opts = {}) {
      const { auth, onProgress } = opts;
      return imageViewOf(await store.pull(ref, { ...(auth && { auth }), ...(onProgress && { onProgress }) }));
    },
    remove: (ref) => store.remove(ref),
    load: async (file) => (await store.load(file)).map(imageViewOf),
  });
}

/** `api` is called for every operation, so a caller may connect on first use and reconnect after a failure. */
export function criImages(api: () => Promise<CriImageApi>, where: string): EndpointImages {
  return adapt({
    where,
    list: async (ref) => (await api()).list(ref),
    status: async (ref, verbose) => (await api()).status(ref, verbose),
    async pull(ref, opts = {}) {
      const cri = await api();
      const { imageRef } = await cri.pull(ref, opts.auth);
      const res = await cri.status(imageRef);
      return res ? res.image : { id: imageRef, repoTags: [ref], repoDigests: [], size: 0, pinned: false, username: '' };
    },
    remove: async (ref) => (await api()).remove(ref),
    async load() {
      throw notSupported(
        'images.load',
        `loading an image archive has no CRI call: load it into the runtime behind ${where} with its own tool (ctr images import, podman load), or run podscope images load without --endpoint`,
      );
    },
  });
}
