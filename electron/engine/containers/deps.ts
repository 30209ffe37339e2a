/** What the container verbs need of a pod and of the image store; service/ hands them the pods feature's lookup and the store. */
import type { PauseView } from '../../../shared/domain/sandbox';
import type { PodFacts, PodLookup } from '../common/pod-facts';
import type { ImageRuntimeConfig } from '../runtime/oci-types';

/** a pod as a container sees it: its facts and its pause process, whose namespaces the container joins */
export type ContainerPod = PodFacts & { pause: Pick<PauseView, 'pid'> };

export type ContainerPods = PodLookup<ContainerPod>;

/** an image as a container is made from it: its id and the config the spec starts from */
export interface ContainerImage {
  id: string;
  config: ImageRuntimeConfig;
}

/** a container's mounted rootfs (images/types.ts ContainerRootfs) */
export interface ContainerRootfs {
  /** absolute path of the mounted rootfs */
  path: string;
  /** unmounts and deletes the upper/work dirs; idempotent */
  release(): Promise<void>;
}

/** what the container verbs ask of the image store (images/types.ts ImageStore fits it) */
export interface ContainerImages {
  /** by id, id prefix, tag or digest ref; undefined when absent */
  resolve(ref: string): Promise<ContainerImage | undefined>;
  /** mounts a fresh rootfs for a container under `dir`, and counts it as a user of the image until release */
  prepareRootfs(imageId: string, containerId: string, dir: string): Promise<ContainerRootfs>;
  /** release() by container id, for an engine restarted since prepareRootfs (the store persists its users) */
  releaseRootfs?(containerId: string): Promise<void>;
}
