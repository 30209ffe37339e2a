/** The image store: content-addressed under <stateDir>/images (store.ts), registry pulls, archive loads, overlay rootfs. */
export type { ContainerRootfs, ImageRecord, ImageRuntimeConfig, ImageStore, PullProgress, RegistryAuth } from './types';
export { LocalImageStore, type ImageStoreOptions } from './store';
export { parseReference, type ImageReference } from './reference';
