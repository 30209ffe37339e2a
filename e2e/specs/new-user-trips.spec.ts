/**
 * What a new user tripped over, on the real engine in browser mode: the create form says what hostname the pod
 * really gets and gives it kubelet's log directory, so a container added with "Add container" (validated as it is
 * typed) writes a log that can be read, on disk and in the log viewer; the remove dialog names the running
 * containers it kills; the pod detail's tabs keep their own scroll position, long labels stay inside their cells,
 * and ↑/↓ work in the pods list without a click first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { test, expect } from '../support/fixtures';
import { buildBusyboxImage } from '../../testkit/busybox-image';
import { startTestRegistry } from '../../testkit/registry';
import { ContainersPage } from '../pages/containers-page';
import { reloadApp } from '../support/navigate';

test('a pod made in the form gets kubelet’s log directory, and its container’s log is readable; the remove dialog names it', async ({
  app,
  env,
}) => {
  const { page, form } = app;
  const registry = await startTestRegistry();
  let logDir: string | undefined;
  try {
    registry.putImage('library/busybox', '1', buildBusyboxImage());
    const ref = `${registry.host}/library/busybox:1`;
    await env.engine.images!.pull(ref);

    await app.goto('New sandbox');
    await form.fillMetadata('logs-form', 'e2e');
    const uid = await form.field('UID').inputValue();
    logDir = `/var/log/pods/e2e_logs-form_${uid}`;
    await test.step("the hostname says the host's is kept; the log directory is kubelet's, in the preview too", async () => {
      const hostname = form.field('Hostname');
      expect(await hostname.getAttribute('placeholder')).not.toBe('logs-form');
      await expect(hostname.locator('xpath=..')).toContainText("keeps the host's hostname");
      await expect(form.field('Log directory')).toHaveValue(logDir!);
      await expect(page.getByTestId('preview-logs')).toContainText(`container logs: ${logDir}/`);
      await app.screenshot('u25-create-form');
    });
    await form.submit();
    await form.waitCreated();
    await form.openCreated();

    await test.step('the Network tab', async () => {
      await app.detail.tab('Network');
      await expect(app.detail.primaryIp).toContainText(/10\.\d+\.0\.\d+/);
      await app.detail.expectLiveRead('live-network');
      await app.screenshot('u25-network-tab');
    });

    const containers = new ContainersPage(page);
    await test.step('Add container: an error shows while typing, before any submit', async () => {
      await containers.roomForDetail();
      await containers.open();
      await page.getByRole('button', { name: 'Add container' }).click();
      const add = page.getByRole('form', { name: 'Add container' });
      await add.getByLabel('Name').fill('box');
      await add.getByLabel('CPU limit (cores)').fill('lots');
      await expect(add.getByText('cores as a number, e.g. 0.5')).toBeVisible();
      await add.getByLabel('Memory limit (MiB)').fill('2');
      await expect(add.getByText('at least 6 MiB (runc refuses a smaller memory limit)')).toBeVisible();
      await app.screenshot('u25-add-container-live-error');
      await add.getByLabel('CPU limit (cores)').fill('');
      await add.getByLabel('Memory limit (MiB)').fill('');
      await expect(add.getByRole('alert')).toHaveCount(0);
      await add.getByLabel('Image').fill(ref);
      await add.getByLabel('Command').fill('/bin/sh -c');
      await add.getByLabel('Arguments').fill('"echo hello-from-the-form; exec sleep 3600"');
      await add.getByRole('button', { name: 'Create and start' }).click();
      await expect(containers.row('box')).toContainText('running');
    });

    await test.step('the log is a CRI log file under that directory, and the log viewer reads it', async () => {
      const file = `${logDir}/box_0.log`;
      await expect.poll(() => existsSync(file) && readFileSync(file, 'utf8')).toMatch(/^\S+ stdout F hello-from-the-form$/m);
      await containers.view('box', 'Logs');
      await expect(containers.logLines).toContainText('hello-from-the-form');
    });

    await test.step('the remove dialog counts and names the running container it kills', async () => {
      await app.detail.header.getByRole('button', { name: 'Remove' }).click();
      const dialog = page.getByRole('dialog', { name: 'Remove e2e/logs-form?' });
      await expect(dialog.getByTestId('confirm-running')).toHaveText('Kills 1 running container: box.');
      await app.screenshot('u25-remove-dialog');
      await dialog.getByRole('button', { name: 'Remove' }).click();
      await expect(app.pods.row('logs-form')).toHaveCount(0);
    });
  } finally {
    await registry.close();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  }
});

test('pod detail tabs keep their own scroll, long labels stay in their cells, ↑/↓ work in the list on load', async ({ app, env }) => {
  const { page } = app;
  const long = 'x'.repeat(160);
  const labels: Record<string, string> = { [`example.com/${'k'.repeat(120)}`]: long };
  for (let i = 0; i < 40; i++) labels[`label-${i}`] = `value-${i}-${'v'.repeat(40)}`;
  await env.engine.run({ config: { metadata: { name: 'labels-a', namespace: 'e2e', uid: 'u-labels-a' }, labels } });
  await page.setViewportSize({ width: 1280, height: 760 });
  await reloadApp(page);

  await test.step('ArrowDown selects the first pod without a click into the list', async () => {
    await expect(app.pods.row('labels-a')).toBeVisible();
    await page.keyboard.press('ArrowDown');
    await expect(app.pods.row('labels-a')).toHaveAttribute('aria-selected', 'true');
  });

  const body = page.locator('.detail-body');
  await test.step('long labels wrap inside their chips: nothing sticks out of the detail', async () => {
    await app.detail.tab('Overview');
    const chip = page.locator('.chip', { hasText: 'kkkk' });
    await expect(chip).toBeVisible();
    // the detail is no wider than the window (a wide label widened the whole view), the chip no wider than the detail
    const detail = await page.locator('.pods-detail').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(detail.scroll).toBeLessThanOrEqual(detail.client);
    const [chipBox, bodyBox] = [await chip.boundingBox(), await body.boundingBox()];
    expect(bodyBox!.x + bodyBox!.width).toBeLessThanOrEqual(1280);
    expect(chipBox!.x + chipBox!.width).toBeLessThanOrEqual(bodyBox!.x + bodyBox!.width);
    await expect(app.detail.header.getByRole('button', { name: 'Remove' })).toBeInViewport({ ratio: 1 });
  });

  await test.step('each tab keeps its own scroll position', async () => {
    await body.evaluate((el) => el.scrollTo(0, 300));
    await expect.poll(() => body.evaluate((el) => el.scrollTop)).toBe(300);
    await app.detail.tab('Raw status');
    await expect.poll(() => body.evaluate((el) => el.scrollTop)).toBe(0);
    await app.detail.tab('Overview');
    await expect.poll(() => body.evaluate((el) => el.scrollTop)).toBe(300);
    await app.screenshot('u25-long-labels');
  });
});
