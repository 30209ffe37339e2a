/**
 * ImageStatus verbose info: the JSON under info["info"]. containerd puts its image spec (the OCI config) there with
 * the chain id; Podscope's has the same `imageSpec` plus the store's own fields. Shared by the CRI server and the CLI
 * (which reads the local store) so `inspecti` shows one shape either way. Also the record's list view, for the app's
 * image list and `podscope images`.
 */
import type { ImageView } from '../../../shared/domain/streams';
import type { ImageRecord } from './types';

/** A record as an image list shows it; the user is the config's (a numeric one as uid, as CRI's Image has it). */
export function imageViewOf(rec: ImageRecord): ImageView {
  const user = (rec.config.User ?? '').split(':')[0] ?? '';
  return {
    id: rec.id,
    repoTags: rec.repoTags,
    repoDigests: rec.repoDigests,
    size: rec.size,
    pinned: rec.pinned,
    ...(/^\d+$/.test(user) ? { uid: Number(user), username: '' } : { username: user }),
  };
}

export function imageVerboseInfo(rec: ImageRecord): string {
  return JSON.stringify({
    id: rec.id,
    repoTags: rec.repoTags,
    repoDigests: rec.repoDigests,
    os: rec.os,
    architecture: rec.architecture,
    size: rec.size,
    diffIds: rec.diffIds,
    createdAt: rec.createdAt,
    imageSpec: {
      os: rec.os,
      architecture: rec.architecture,
      created: rec.imageCreated,
      config: rec.config,
      rootfs: { type: 'layers', diff_ids: rec.diffIds },
    },
  });
}
