/**
 * ImageStatus verbose info: the JSON under info["info"]. containerd puts its image spec (the OCI config) there with
 * the chain id; Podscope's has the same `imageSpec` plus the store's own fields. Shared by the CRI server and the CLI
 * (which reads the local store) so `inspecti` shows one shape either way.
 */
import type { ImageRecord } from './types';

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
    imageSpec: { os: rec.os, architecture: rec.architecture, config: rec.config, rootfs: { type: 'layers', diff_ids: rec.diffIds } },
  });
}
