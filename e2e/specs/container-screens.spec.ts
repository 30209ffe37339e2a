/**
 * The container screens on the real engine, end to end without streaming: an image pulled on the Images page from a
 * registry on 127.0.0.1 (layers and config inspected), a container added to a real pod with "Add container" (crictl
 * preview, then CreateContainer + StartContainer through runc), its status in the Containers tab (seccomp profile
 * applied, resources), its log in the log viewer, and the engine refusing to remove an image a container uses.
 * Screenshots 43-47 at 1440×900 under e2e/artifacts/.
 */
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';
import { buildBusyboxImage } from '../../testkit/busybox-image';
import { startTestRegistry } from '../../testkit/registry';
import { ContainersPage } from '../pages/containers-page';

test('Images page, Add container, Containers tab and log viewer on a real pod', async ({ app, env }) => {
  const { page } = app;
  const registry = await startTestRegistry();
  let podId: string | undefined;
  try {
    registry.putImage(
      'library/busybox',
      '1',
      buildBusyboxImage({ cmd: ['sh'], workingDir: '/www', exposedPorts: ['8080/tcp'], labels: { suite: 'e2e' } }),
    );
    const ref = `${registry.host}/library/busybox:1`;
    const images = page.getByRole('table', { name: 'Images' });

    await test.step('pull on the Images page; inspect shows layers and config', async () => {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('button', { name: /^Images/ })
        .click();
      await page.getByLabel('Image to pull').fill(ref);
      await page.getByRole('button', { name: 'Pull', exact: true }).click();
      await expect(page.getByText(`Pulled ${ref}`)).toBeVisible();
      const row = images.locator('tr', { hasText: `${registry.host}/library/busybox` });
      await expect(row).toContainText('1');
      await row.getByRole('button', { name: `${registry.host}/library/busybox`, exact: true }).click();
      const inspect = page.getByRole('complementary', { name: `Image ${ref}` });
      await expect(inspect.getByRole('list', { name: 'Layers' }).locator('li')).toHaveCount(1);
      await expect(inspect.getByRole('list', { name: 'Layers' })).toContainText('sha256:');
      await expect(inspect).toContainText('/www');
      await expect(inspect).toContainText('8080/tcp');
      await app.screenshot('43-images-page');
    });

    const logDir = join(env.root, 'pod-logs', 'screens');
    podId = (
      await env.engine.run({
        config: { metadata: { name: 'screens', namespace: 'e2e', uid: 'uid-screens' }, hostname: 'screens', log_directory: logDir },
      })
    ).id;
    const containers = new ContainersPage(page);

    await test.step('Add container: the form, its crictl preview, create and start', async () => {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('button', { name: /^Sandboxes/ })
        .click();
      await app.pods.open('screens');
      await containers.roomForDetail();
      await containers.open();
      await page.getByRole('button', { name: 'Add container' }).click();
      const form = page.getByRole('form', { name: 'Add container' });
      await form.getByLabel('Name').fill('ticker');
      await form.getByLabel('Image').fill(ref);
      await expect(form.getByText('present on this endpoint')).toBeVisible();
      await form.getByLabel('Command').fill('/bin/sh -c');
      await form.getByLabel('Arguments').fill('"i=0; while true; do echo tick $i; echo tock $i >&2; i=$((i+1)); sleep 1; done"');
      await form.getByRole('button', { name: '+ Add variable' }).click();
      await form.getByLabel('env 1 name').fill('MODE');
      await form.getByLabel('env 1 value').fill('demo');
      await form.getByLabel('Container ports').fill('8080');
      await form.getByLabel('CPU limit (cores)').fill('0.5');
      await form.getByLabel('Memory limit (MiB)').fill('64');
      const preview = page.getByTestId('container-preview');
      await expect(preview).toContainText('"memory_limit_in_bytes": 67108864');
      await expect(preview).toContainText('"cpu_quota": 50000');
      await expect(preview).toContainText('"log_path": "ticker_0.log"');
      await app.screenshot('44-add-container');
      await form.getByRole('button', { name: 'Create and start' }).click();
      await expect(containers.row('ticker')).toContainText('running');
    });

    await test.step('the Containers tab shows what the engine applied', async () => {
      const pane = containers.pane('ticker');
      await expect(pane).toContainText('/bin/sh -c');
      // the profile the process runs under, as the engine reports it (CRI's default without a profile: unconfined)
      const made = (await env.engine.listContainers({ podSandboxId: podId })).find((c) => c.metadata.name === 'ticker')!;
      const status = await env.engine.containerStatus(made.id);
      await expect(pane.getByTestId('seccomp-profile')).toHaveText(status.seccomp);
      expect(status.resources?.memory_limit_in_bytes).toBe(64 * 1024 * 1024);
      await expect(pane).toContainText('0.50 CPU');
      await expect(pane).toContainText('64.0 MiB');
      await expect(pane).toContainText('MODE=demo');
      await app.screenshot('45-containers-tab');
      // what the create and the start did, with the times the engine measured, as the pod's lifecycle shows its run
      const steps = pane.getByTestId('container-steps');
      for (const step of ['image.resolve', 'rootfs.prepare', 'user.resolve', 'seccomp.load', 'runtime.start'])
        await expect(steps).toContainText(step);
      await expect(steps).toContainText(`monitorPid=${status.monitorPid}`);
      await steps.scrollIntoViewIfNeeded();
      await app.screenshot('45b-container-steps');
    });

    await test.step('the log viewer follows; stderr is told apart and can be hidden', async () => {
      await containers.view('ticker', 'Logs');
      await expect(containers.logLines).toContainText('tick 0');
      // follow: a later line arrives while the viewer is open
      await expect(containers.logLines).toContainText('tick 2');
      await expect(containers.logLines.locator('[data-stream="stderr"]').first()).toContainText('tock');
      await page.getByLabel('Search the log').fill('tick 1');
      await expect(containers.logLines.locator('mark').first()).toHaveText('tick 1');
      await page.getByLabel('Search the log').fill('');
      await app.screenshot('46-log-viewer');
      await page.getByRole('checkbox', { name: /stderr/ }).uncheck();
      await expect(containers.logLines.locator('[data-stream="stderr"]')).toHaveCount(0);
    });

    await test.step('the engine refuses to remove an image a container uses, and the page says why', async () => {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('button', { name: /^Images/ })
        .click();
      await images.getByRole('button', { name: `Remove ${ref}` }).click();
      await page.getByRole('dialog', { name: 'Remove image' }).getByRole('button', { name: 'Remove' }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'The image was not removed' });
      await expect(alert).toContainText('FailedPrecondition');
      await expect(images).toContainText(`${registry.host}/library/busybox`);
      await app.screenshot('47-image-remove-refused');
    });
  } finally {
    if (podId) {
      for (const c of await env.engine.listContainers({ podSandboxId: podId })) {
        await env.engine.stopContainer(c.id, 0).catch(() => {});
        await env.engine.removeContainer(c.id).catch(() => {});
      }
      await env.engine.stop(podId).catch(() => {});
      await env.engine.remove(podId).catch(() => {});
    }
    await registry.close();
  }
});
