/**
 * Builds the renderer once so browser mode serves the current code; refuses to run without root; empties the run's
 * record of console errors (support/console-errors.ts). The function it returns is the run's global teardown: the
 * count of console errors over the run, and the host-global part of the cleanup (portmap's shared chains, the engine's
 * empty cgroup parents), once, after every worker is done. A worker may not do it (PODSCOPE_HOST_SHARED, set for
 * the workers by playwright.config.ts, see testkit/host-cleanup.ts): its check "no pod uses portmap now" would race with another worker's ADD.
 */
import { build } from 'vite';
import { fileURLToPath } from 'node:url';
import { restoreSharedHost, sharedHostOuter, snapshotHost } from '../../testkit/host-cleanup';
import { consoleErrorSummary, resetConsoleErrors } from './console-errors';

export default async function globalSetup(): Promise<() => void> {
  if (process.getuid?.() !== 0) throw new Error('the e2e suite drives the real engine (netns, CNI, runc): run it as root');
  const before = snapshotHost();
  resetConsoleErrors();
  if (process.env.PODSCOPE_E2E_SKIP_BUILD !== '1') {
    await build({ configFile: fileURLToPath(new URL('../../renderer/vite.config.ts', import.meta.url)), logLevel: 'warn' });
  }
  // `npm test` runs Playwright beside the real files and cleans the shared host once after both (scripts/shared-host.ts)
  return () => {
    process.stdout.write(`${consoleErrorSummary()}\n`);
    if (!sharedHostOuter()) restoreSharedHost(before);
  };
}
