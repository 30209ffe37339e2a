/** The image store of an engine built without one (tests of the sandbox verbs alone): empty, and it pulls nothing. */
import { PodscopeError } from '../../../shared/domain/errors';
import type { ImageStore } from './types';

export function noImageStore(why = 'this engine was built without an image store'): ImageStore {
  const refuse = async (): Promise<never> => {
    throw new PodscopeError('Unavailable', why);
  };
  return {
    pull: refuse,
    load: refuse,
    list: async () => [],
    resolve: async () => undefined,
    remove: async () => undefined,
    fsInfo: async () => ({ mountpoint: '', usedBytes: 0, inodesUsed: 0, timestampNs: BigInt(Date.now()) * 1_000_000n }),
    prepareRootfs: refuse,
    releaseRootfs: async () => undefined,
  };
}
