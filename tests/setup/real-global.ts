/**
 * Global setup of the projects whose files share the host at the same time (real, real-alone): before any file runs,
 * slots of the test kit's allocator left by killed runs are reclaimed and the host's shared portmap chains are
 * snapshotted; after the last file, what only the whole run may remove (portmap's shared chains it added, the
 * engine's empty cgroup parents) is removed, as each file's own cleanup did when files ran one at a time.
 */
import { reclaimStaleLeases } from '../../testkit/allocator';
import { restoreSharedHost, snapshotHost } from '../../testkit/host-cleanup';

export default function setup(): () => void {
  if (process.getuid?.() !== 0) return () => undefined;
  reclaimStaleLeases();
  const before = snapshotHost();
  return () => {
    restoreSharedHost(before);
    reclaimStaleLeases();
  };
}
