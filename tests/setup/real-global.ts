/**
 * Global setup of the projects whose files share the host at the same time (real, real-alone): before any file runs,
 * slots of the test kit's allocator left by killed runs are reclaimed and the host's shared portmap chains are
 * snapshotted; after the last file, what only the whole run may remove (portmap's shared chains it added, the
 * engine's empty cgroup parents) is removed, as each file's own cleanup did when files ran one at a time.
 */
import { reclaimStaleLeases } from '../../testkit/allocator';
import { restoreSharedHost, sharedHostOuter, snapshotHost } from '../../testkit/host-cleanup';

export default function setup(): () => void {
  // as root only; and not when `npm test` does it once around this run and Playwright's (scripts/shared-host.ts)
  if (process.getuid?.() !== 0 || sharedHostOuter()) return () => undefined;
  reclaimStaleLeases();
  const before = snapshotHost();
  return () => {
    restoreSharedHost(before);
    reclaimStaleLeases();
  };
}
