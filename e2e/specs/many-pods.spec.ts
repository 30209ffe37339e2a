/**
 * A CRI endpoint with 2,000 pods (a synthetic runtime.v1 server, testkit/synthetic-cri.ts, without
 * GetContainerEvents so the app must follow it by re-listing): added through the UI, the list shows every pod and
 * its count, and the filter narrows it to exactly the pods that match, with the newest first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';
import { startSyntheticCri, type SyntheticCri } from '../../testkit/synthetic-cri';

test('2,000 pods on a CRI endpoint: the whole count shows, and a filter narrows it', async ({ app }) => {
  const { page } = app;
  const dir = mkdtempSync(join(tmpdir(), 'psp-e2e-many-'));
  let cri: SyntheticCri | undefined;
  try {
    cri = await startSyntheticCri({ socketPath: join(dir, 'cri.sock'), pods: 2000, events: false });
    await app.endpoints.add(cri.socketPath, 'synthetic 2k');
    const count = page.locator('.toolbar-count');
    await expect(count).toHaveText('2000 sandboxes');
    // newest first: the last generated pod heads the list
    await expect(app.pods.row('pod-1999')).toBeVisible();

    const filter = page.getByRole('searchbox', { name: 'Filter pods' });
    await filter.fill('pod-19');
    // pod-19, pod-190…199, pod-1900…1999
    await expect(count).toHaveText('111 of 2000');
    await expect(app.pods.row('pod-1999')).toBeVisible();
    await expect(app.pods.row('pod-1899')).toHaveCount(0);
    await filter.fill('pod-1234');
    await expect(count).toHaveText('1 of 2000');
    await expect(app.pods.row('pod-1234')).toBeVisible();
    await app.screenshot('perf-2k-filtered');
    await filter.fill('');
    await expect(count).toHaveText('2000 sandboxes');
  } finally {
    await cri?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
