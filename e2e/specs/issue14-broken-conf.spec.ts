/**
 * Readiness that matches reality: a conflist whose plugin binary does not exist (sorted first, so it is the network
 * that gets loaded), the good conflist pushed out by max networks and a broken file after both. The header, the
 * Engine page, the CNI page and the form preview must all say the network is not ready and why, and a run must
 * name the plugin and the file. The files are removed afterwards and the engine must become ready again.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';

const MISSING = 'psc-no-such-plugin';

test('a conflist with a missing plugin binary: NetworkReady false everywhere, skipped files shown, the run names plugin and file', async ({
  app,
  env,
}) => {
  const confDir = env.options.cniConfDir!;
  const broken = join(confDir, '05-broken.conflist');
  const good = join(confDir, '10-psc-e2e.conflist');
  const garbage = join(confDir, '99-garbage.conflist');
  try {
    await writeFile(broken, JSON.stringify({ cniVersion: '1.0.0', name: 'psc-broken', plugins: [{ type: MISSING }] }));
    await writeFile(garbage, '{"cniVersion": "1.0.0", "name": ');
    const reason = `plugin "${MISSING}" (network "psc-broken", file ${broken}): not found in bin dirs [/usr/lib/cni]`;

    await test.step('the header says NetworkReady is false, with the plugin and the file', async () => {
      const banner = app.page.getByTestId('engine-problems');
      await expect(banner).toContainText('NetworkReady is false (NetworkPluginNotReady)');
      await expect(banner).toContainText(reason);
      await app.screenshot('u1-01-broken-conf-banner');
    });

    await test.step('the Engine page is not "healthy"', async () => {
      await app.goto('Engine');
      const head = app.page.locator('.page-head');
      await expect(head).toContainText('1 problem');
      await expect(head).not.toContainText('healthy');
      await expect(app.page.getByRole('row', { name: /NetworkReady/ })).toContainText(reason);
      await app.screenshot('u1-02-engine-page-not-ready');
    });

    await test.step('the CNI page: not ready, the missing binary, both skipped files with their reasons', async () => {
      await app.goto('CNI config');
      const panel = app.page.getByTestId('cni-panel');
      await expect(panel.locator('.page-head')).toContainText('not ready');
      await expect(app.page.getByTestId('cni-missing-plugins')).toContainText(reason);
      const skipped = app.page.getByTestId('cni-skipped');
      await expect(skipped.locator(`[data-source="${good}"]`)).toContainText(
        'skipped: only the first 1 network in the conf dir is used (max networks 1); network "psc-e2e" is not attached',
      );
      await expect(skipped.locator(`[data-source="${garbage}"]`)).toContainText(
        'it would not load anyway: failed to load CNI config list file',
      );
      await app.screenshot('u1-03-cni-page-skipped-missing');
    });

    await test.step('the form preview says where the run would fail', async () => {
      await app.goto('New sandbox');
      await app.form.fillMetadata('e2e-broken', 'e2e');
      await expect(app.page.getByTestId('preview-error')).toHaveText(`this run would fail at ${reason}`);
      await expect(app.form.pluginPreview(MISSING)).toContainText('binary not found');
      await app.screenshot('u1-04-preview-would-fail');
    });

    await test.step('a run anyway fails naming the plugin and the conflist file', async () => {
      await app.form.submit();
      const progress = app.page.getByTestId('run-progress');
      await expect(progress).toContainText('Creation failed', { timeout: 60_000 });
      await expect(progress.locator('.error-msg')).toContainText(
        `plugin type="${MISSING}" failed (add): failed to find plugin "${MISSING}" in path [/usr/lib/cni] (network "psc-broken", file ${broken})`,
      );
      await app.screenshot('u1-05-run-error-names-file');
      expect(await env.engine.list()).toEqual([]);
    });
  } finally {
    await rm(broken, { force: true });
    await rm(garbage, { force: true });
  }
  // the engine reloads the conf dir by itself and is ready again (the next specs need it)
  await app.goto('Sandboxes');
  await expect(app.page.getByTestId('engine-problems')).toHaveCount(0);
  await app.goto('Engine');
  await expect(app.page.locator('.page-head')).toContainText('healthy');
});
