/**
 * The image store: what CreateContainer needs from images, and what the CRI ImageService serves. Content-addressed
 * under <stateDir>/images (blobs by digest, layers unpacked once by diffID, shared through overlayfs).
 * The real implementation pulls from OCI distribution registries and loads OCI layouts / `docker save` archives.
 * Tests above this boundary use that same store over fakes of its OS touch points (testkit/fakes/fake-overlay.ts).
 */

/** The parts of an OCI image config the runtime uses: the runtime's input type, defined where it is read. */
export type { ImageRuntimeConfig } from '../runtime/oci-types';
import type { ImageRuntimeConfig } from '../runtime/oci-types';

export interface ImageRecord {
  /** `sha256:<hex>` of the image config blob (what CRI calls the image id) */
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** bytes of the unpacked layers (what ListImages reports) */
  size: number;
  config: ImageRuntimeConfig;
  /** layer diffIDs, base first */
  diffIds: string[];
  os: string;
  architecture: string;
  pinned: boolean;
  /** when it was pulled or loaded (RFC 3339) */
  createdAt: string;
  /** the image config's `created` (when the image was built), when it has one */
  imageCreated?: string;
}

export interface PullProgress {
  ref: string;
  /** e.g. "resolving", "manifest", "layer sha256:… 1.2/3.4 MB", "unpacking", "done" */
  phase: string;
  doneBytes: number;
  totalBytes: number;
}

export interface RegistryAuth {
  username?: string;
  password?: string;
  /** base64(user:password), as crictl's --creds / docker config.json "auth" */
  auth?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface ContainerRootfs {
  /** absolute path of the mounted rootfs (overlay: image layers as lower dirs, a private upper dir) */
  path: string;
  /** unmounts and deletes the upper/work dirs; idempotent */
  release(): Promise<void>;
}

export interface ImageStore {
  pull(ref: string, opts?: { auth?: RegistryAuth; signal?: AbortSignal; onProgress?: (p: PullProgress) => void }): Promise<ImageRecord>;
  /** an OCI image layout (dir or tar) or a `docker save` archive; returns the images it held */
  load(file: string, opts?: { signal?: AbortSignal }): Promise<ImageRecord[]>;
  list(): Promise<ImageRecord[]>;
  /** by id, id prefix, tag (`busybox`, `busybox:1`, `127.0.0.1:5000/busybox:1`) or digest ref; undefined when absent */
  resolve(ref: string): Promise<ImageRecord | undefined>;
  /** FailedPrecondition while a container uses it (see `acquire`); idempotent for unknown refs */
  remove(ref: string): Promise<void>;
  /** bytes and inodes used by the store, and its mount point (ImageFsInfo) */
  fsInfo(): Promise<{ mountpoint: string; usedBytes: number; inodesUsed: number; timestampNs: bigint }>;
  /**
   * Mounts a fresh rootfs for a container from the image's layers under `dir`, and counts the container as a user of
   * the image until `release`.
   */
  prepareRootfs(imageId: string, containerId: string, dir: string): Promise<ContainerRootfs>;
  /**
   * Same as `release()` of the rootfs prepared for this container, for callers that no longer hold that object (an
   * engine restarted since prepareRootfs: the store persists its users). Idempotent; unknown ids are a no-op.
   * Optional so existing implementations stay valid; the real store and the empty store have it.
   */
  releaseRootfs?(containerId: string): Promise<void>;
}
