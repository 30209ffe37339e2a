/**
 * The app as a new user meets it at a glance, with the real engine in Chromium at 1440×900:
 * - the pod at a glance: the Overview leads with the network verdict (IPs, the last probe with its time and failing
 *   paths, bandwidth requested vs measured, CHECK), the header never shows a green "Ready" alone while paths fail, a
 *   network column in the list, Reachability a tab of its own;
 * - the layout: with one pod the list takes its rows' height, the split handle is visible, draggable and remembered
 *   across a reload, the topology fits the width, Add container scrolls with the page, not in a box of its own;
 * - the keyboard: the focus follows the new content after Probe, after Create and after a sidebar choice, and Tab
 *   from a row checkbox never lands on <body>;
 * - the console: zero errors over the whole tour, a terminal opened and text pasted into the lab editor included
 *   (the CSP stays strict: xterm's own <style> elements carry the page's nonce).
 */
import { execFileSync } from 'node:child_process';
import type { ConsoleMessage, Page } from '@playwright/test';
import { test, expect } from '../support/fixtures';
import { startBusyboxPod } from '../support/busybox-pod';
import { ContainersPage } from '../pages/containers-page';
import { e2ePort } from '../support/sandbox-env';
import { lostAndRedone, reloadApp } from '../support/navigate';

const HOST_PORT = e2ePort(1);

/** every console error and CSP refusal from now on */
function watchConsole(page: Page): () => string[] {
  const entries: Array<{ text: string; url: string; line: number }> = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') entries.push({ text: m.text(), url: m.location().url, line: m.location().lineNumber });
  });
  page.on('pageerror', (e) => entries.push({ text: `pageerror: ${e.message}`, url: '', line: 0 }));
  // read at the end: a resource lost to the host's network changing is known as redone only once its load finished
  return () => entries.filter((e) => !lostAndRedone(page, e.text, e.url)).map((e) => `${e.text} @ ${e.url}:${e.line}`);
}

const activeDescription = (page: Page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return 'BODY';
    return `${a.tagName.toLowerCase()}${a.getAttribute('data-testid') ? `[data-testid=${a.getAttribute('data-testid')}]` : ''}${a.hasAttribute('data-page-focus') ? '[data-page-focus]' : ''} ${(a.textContent ?? '').trim().slice(0, 40)}`;
  });

test('glance tour: verdict at a glance, layout, focus after every action, no console error', async ({ app, env }) => {
  test.setTimeout(240_000);
  const { page } = app;
  const errors = watchConsole(page);
  await page.setViewportSize({ width: 1440, height: 900 });
  await reloadApp(page);
  const containers = new ContainersPage(page);

  await test.step('sidebar: choosing a page puts the focus in it (the form’s first field, else the heading)', async () => {
    await app.goto('New sandbox');
    await expect.poll(() => activeDescription(page)).toContain('input[data-page-focus]');
    await app.goto('CNI config');
    await expect(page.locator('h2', { hasText: 'CNI configuration' })).toBeFocused();
    await app.goto('Engine');
    await expect(page.locator('main h2', { hasText: 'Engine' })).toBeFocused();
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('button', { name: /^Images/ })
      .click();
    await expect(page.locator('main h1', { hasText: 'Images' })).toBeFocused();
  });

  await test.step('Create: the focus follows the run, then lands on "Open sandbox"', async () => {
    await app.goto('New sandbox');
    await page.getByLabel('Name', { exact: true }).fill('glance-form');
    await page.getByLabel('Namespace', { exact: true }).fill('e2e');
    await page.locator('.create-form button[type="submit"]').click();
    await expect(page.getByRole('button', { name: 'Open sandbox' })).toBeFocused({ timeout: 60_000 });
    await app.screenshot('glance-01-created-focus');
  });

  const pod = await startBusyboxPod(env, { name: 'glance-web', command: ['/bin/sh', '-c', 'exec sleep 3600'] });
  const { id } = await env.engine.run({
    config: {
      metadata: { name: 'glance-ports', namespace: 'e2e', uid: 'uid-glance-ports' },
      port_mappings: [{ container_port: 8080, host_port: HOST_PORT }],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
    },
  });
  const ip = (await env.engine.status(id)).ip;
  const rule = ['OUTPUT', '-d', `${ip}/32`, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'glance-block', '-j', 'DROP'];
  execFileSync('iptables', ['-I', ...rule]);
  try {
    await test.step('pods list: a network column; Tab from a row checkbox stays in the app', async () => {
      await app.goto('Sandboxes');
      await expect(page.getByRole('columnheader', { name: 'Network' })).toBeVisible();
      await page.getByRole('checkbox', { name: 'Select glance-ports' }).focus();
      await page.keyboard.press('Tab');
      expect(await activeDescription(page)).not.toBe('BODY');
      await page.getByRole('checkbox', { name: 'Select glance-ports' }).focus();
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      expect(await activeDescription(page)).not.toBe('BODY');
      await page.getByRole('checkbox', { name: 'Select glance-ports' }).uncheck();
    });

    await test.step('Overview leads with the verdict; Probe now: failing paths named, red beside Ready, focus on the result', async () => {
      await app.pods.open('glance-ports');
      const card = page.getByTestId('network-verdict');
      await expect(card).toBeVisible();
      await expect(card.getByTestId('verdict-ip')).toHaveText(ip);
      await page.getByTestId('verdict-probe').click();
      await expect(card).toHaveAttribute('data-verdict', 'failing', { timeout: 60_000 });
      await expect(page.getByTestId('verdict-reach')).toBeFocused();
      await expect(card.getByTestId('verdict-failing')).toContainText(`:${HOST_PORT}/tcp`);
      await expect(card.getByTestId('verdict-reach-at')).toContainText('measured at');
      await expect(page.getByTestId('header-net-verdict')).toContainText('failing');
      await expect(page.getByTestId('header-net-verdict').locator('.pill-bad')).toBeVisible();
      await expect(app.pods.row('glance-ports').locator('[data-col="network"] [data-verdict="failing"]')).toBeVisible();
      await expect(app.detail.tabButton('Reachability')).toContainText('failing');
      await app.screenshot('glance-02-overview-verdict');
    });

    await test.step('layout: the list shrinks to its rows, the handle is visible and its place remembered', async () => {
      const top = await page.getByTestId('pods-top').boundingBox();
      const handle = page.getByTestId('pods-split');
      const hb = (await handle.boundingBox())!;
      // 3 pods: toolbar + header + 3 rows is well under the 40% (≈ 340 px) a fixed share kept
      expect(top!.height).toBeLessThan(260);
      expect(hb.height).toBeGreaterThanOrEqual(8);
      await page.mouse.move(hb.x + hb.width / 2, hb.y + hb.height / 2);
      await page.mouse.down();
      await page.mouse.move(hb.x + hb.width / 2, hb.y - 60, { steps: 4 });
      await page.mouse.up();
      const share = await handle.getAttribute('aria-valuenow');
      expect(Number(share)).toBeLessThan(40);
      await reloadApp(page);
      await app.pods.open('glance-ports');
      await expect(page.getByTestId('pods-split')).toHaveAttribute('aria-valuenow', share!);
    });

    await test.step('Reachability tab: Probe, the focus on the results', async () => {
      await app.detail.tab('Reachability');
      await page.getByTestId('probe-button').click();
      await expect(page.getByTestId('reach-results')).toBeFocused({ timeout: 60_000 });
      await expect(page.getByTestId('reach-paths').locator('tbody tr[data-verdict="timeout"]').first()).toBeVisible();
      await app.screenshot('glance-03-reachability-tab');
    });

    await test.step('Network: the topology fits the width at 1440 px', async () => {
      await app.detail.tab('Network');
      const svg = page.getByTestId('topology').locator('svg.topo');
      await expect(svg).toBeVisible({ timeout: 30_000 });
      const body = (await page.locator('.detail-body').boundingBox())!;
      const box = (await svg.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(body.x + body.width);
      await page.getByTestId('topology').scrollIntoViewIfNeeded();
      await app.screenshot('glance-04-topology');
    });
  } finally {
    execFileSync('iptables', ['-D', ...rule]);
  }

  try {
    await test.step('a terminal opens without a CSP refusal', async () => {
      await app.pods.open(pod.podName);
      await containers.open();
      await expect(containers.row(pod.containerName)).toContainText('running');
      await containers.view(pod.containerName, 'Terminal');
      await containers.terminalSize();
      await containers.typeInTerminal('echo glance-hi');
      await expect(containers.terminalRows.locator('div', { hasText: /^glance-hi\s*$/ })).toHaveCount(1);
      // xterm's cell metrics applied: its rows have the measured line height, not the browser default
      const lineHeight = await containers.terminalRows
        .locator('div')
        .first()
        .evaluate((e) => getComputedStyle(e).lineHeight);
      expect(lineHeight).not.toBe('normal');
      await app.screenshot('glance-05-terminal');
    });

    await test.step('Add container is a section of the page, not a box that scrolls inside it', async () => {
      await containers.view(pod.containerName, 'Details');
      await page.getByRole('button', { name: /Add container/ }).click();
      const form = page.getByRole('form', { name: 'Add container' });
      await expect(form).toBeVisible();
      const overflow = await form.evaluate((e) => getComputedStyle(e).overflowY);
      expect(overflow).toBe('visible');
      await app.screenshot('glance-06-add-container');
    });
  } finally {
    await pod.dispose();
  }

  await test.step('lab editor: pasting text reports nothing', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
    await app.goto('CNI lab');
    const editor = page.getByLabel('Conflist');
    await expect(editor).toBeVisible();
    await page.evaluate(() =>
      navigator.clipboard.writeText('{\n  "cniVersion": "1.0.0",\n  "name": "pasted",\n  "plugins": [\n    { "type": "loopback" }\n  ]\n}'),
    );
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Control+V');
    await expect(editor).toContainText('"pasted"');
    await app.screenshot('glance-07-lab-paste');
  });

  expect(errors(), 'console errors over the tour').toEqual([]);
});
