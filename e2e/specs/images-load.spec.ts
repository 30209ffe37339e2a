/**
 * "Load image" on the Images page, on the real engine: a docker save archive built offline (Debian's busybox) is
 * loaded from a path on the engine's host and listed with its tag (the same image may already be in the store under
 * other tags from earlier specs: the message names them all); a path that is not there gets the store's own
 * error naming it; a relative path is refused as it is typed (the engine reads the path, not the browser).
 */
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';
import { buildBusyboxImage, writeDockerSave } from '../../testkit/busybox-image';

test('Images page loads a docker save archive from the host, and names a path it cannot read', async ({ app, env }) => {
  const { page } = app;
  const archive = writeDockerSave(join(env.root, 'saved.tar'), [
    { image: buildBusyboxImage({ cmd: ['sh'] }), repoTags: ['busybox:loaded'] },
  ]);
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('button', { name: /^Images/ })
    .click();
  const pathInput = page.getByLabel('Image archive or layout to load');

  await test.step('a relative path is refused as it is typed', async () => {
    await pathInput.fill('saved.tar');
    await expect(page.getByRole('alert').filter({ hasText: 'an absolute path' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Load image' })).toBeDisabled();
  });

  await test.step('a path that is not there: the store says which', async () => {
    await pathInput.fill(join(env.root, 'missing.tar'));
    await page.getByRole('button', { name: 'Load image' }).click();
    await expect(page.getByText(`Could not load ${join(env.root, 'missing.tar')}`)).toBeVisible();
  });

  await test.step('the archive loads and its tag is listed', async () => {
    await pathInput.fill(archive);
    await page.getByRole('button', { name: 'Load image' }).click();
    await expect(page.getByRole('status').filter({ hasText: /^Loaded .*docker\.io\/library\/busybox:loaded/ })).toBeVisible();
    await expect(page.getByRole('table', { name: 'Images' }).locator('tr', { hasText: 'docker.io/library/busybox' })).toContainText(
      'loaded',
    );
    await app.screenshot('60-images-load');
  });
});
