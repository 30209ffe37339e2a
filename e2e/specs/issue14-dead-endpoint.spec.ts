/**
 * A CRI daemon that dies: a Podscope engine served over CRI (`podscope cri`) as a child, added through the UI, then
 * killed by pid. Within two seconds the switcher says it is lost and the pod list says it cannot reach it, keeps
 * the last list greyed with its age, and — once the daemon is back on the same socket — reconnects by itself.
 * The endpoint can be renamed and removed; the selector shows its whole label.
 */
import { test, expect } from '../support/fixtures';
import { startPodscopeDaemon, type PodscopeDaemon } from '../support/podscope-daemon';
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';

test('a dead CRI endpoint shows as lost within 2 s, keeps the last list greyed, reconnects by itself; rename and remove', async ({
  app,
}) => {
  const { page } = app;
  let daemon: PodscopeDaemon | undefined;
  try {
    daemon = await startPodscopeDaemon();
    const podFile = join(dirname(daemon.socketPath), 'pod.json');
    // host network: no CNI needed on the daemon's side
    writeFileSync(
      podFile,
      JSON.stringify({
        metadata: { name: 'e2e-remote', namespace: 'e2e', uid: 'u-remote' },
        linux: { security_context: { namespace_options: { network: 2 } } },
      }),
    );
    await daemon.cli(['runp', podFile]);

    const labelFits = () =>
      app.endpoints.switcher.evaluate((el: HTMLSelectElement) => {
        const style = getComputedStyle(el);
        const ctx = document.createElement('canvas').getContext('2d')!;
        ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const text = el.options[el.selectedIndex]!.text;
        // room for the text: the box minus padding and the dropdown arrow (~20px)
        const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        return { text, width: ctx.measureText(text).width, room };
      });
    await test.step("the selector shows the built-in engine's label whole", async () => {
      const fits = await labelFits();
      expect(fits.text).toBe('This machine (built-in engine)');
      expect(fits.width).toBeLessThanOrEqual(fits.room);
    });
    await app.endpoints.add(daemon.socketPath);
    await expect(app.pods.row('e2e-remote')).toBeVisible();
    await test.step("an added endpoint's default label fits too (runtime · socket name; the path is shown below)", async () => {
      const fits = await labelFits();
      expect(fits.text).toBe('podscope · cri.sock');
      expect(fits.width).toBeLessThanOrEqual(fits.room);
      await expect(app.endpoints.capabilityNote).toContainText(daemon!.socketPath);
    });
    await app.screenshot('u1-40-remote-endpoint-live');

    await test.step('killed by pid: lost within 2 s everywhere, the last list greyed with its age', async () => {
      await daemon!.kill();
      const killedAt = Date.now();
      await expect(page.getByTestId('endpoint-lost')).toBeVisible({ timeout: 2_000 });
      await expect(page.getByTestId('pods-unreachable')).toContainText('cannot reach podscope · cri.sock:', { timeout: 2_000 });
      expect(Date.now() - killedAt).toBeLessThan(2_500);
      await expect(page.getByText('No pod sandboxes yet')).toHaveCount(0);
      await expect(page.getByTestId('pods-list')).toHaveAttribute('data-stale', 'true');
      await expect(page.getByTestId('pods-unreachable')).toContainText(/showing the list from \d+s ago, greyed/);
      await expect(app.pods.row('e2e-remote')).toBeVisible();
      await expect(page.getByTestId('endpoint-lost')).not.toContainText(/Resolution note:\s*$/);
      await expect(page.getByTestId('pods-unreachable')).not.toContainText('Resolution note:');
      await app.screenshot('u1-41-endpoint-lost-stale-list');
    });

    await test.step('back on the same socket: reconnects by itself', async () => {
      await daemon!.start();
      await expect(page.getByTestId('pods-unreachable')).toHaveCount(0, { timeout: 30_000 });
      await expect(page.getByTestId('endpoint-lost')).toHaveCount(0);
      await expect(page.getByTestId('pods-list')).toHaveAttribute('data-stale', 'false');
      await expect(app.pods.row('e2e-remote')).toBeVisible();
      await app.screenshot('u1-42-endpoint-reconnected');
    });

    await test.step('rename, then remove', async () => {
      const caps = app.endpoints.capabilityNote;
      await caps.getByRole('button', { name: 'Rename…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Rename the node' });
      await dialog.getByLabel('Label').fill('daemon B');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect(dialog).toBeHidden();
      expect(await app.endpoints.selectedLabel()).toBe('daemon B');
      await app.screenshot('u1-43-endpoint-renamed');
      await caps.getByRole('button', { name: 'Remove…' }).click();
      await page.getByRole('dialog', { name: 'Remove daemon B?' }).getByRole('button', { name: 'Remove' }).click();
      await expect.poll(() => app.endpoints.selectedLabel()).toContain('built-in engine');
      await expect(app.endpoints.switcher.locator('option', { hasText: 'daemon B' })).toHaveCount(0);
    });
  } finally {
    const problems = (await daemon?.dispose()) ?? [];
    if (problems.length) console.warn(`daemon teardown problems:\n${problems.join('\n')}`);
  }
});
