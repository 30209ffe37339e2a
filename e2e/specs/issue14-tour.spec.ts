/**
 * A hands-on tour of the usability fixes, one by one, in browser mode: form errors the user can act on, bulk actions on what the
 * user sees, the list/detail split, released host ports of stopped pods, Kubernetes label selectors, the crictl
 * inspectp shape, the theme switch and the favicon — and a screenshot of every page.
 */
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { test, expect } from '../support/fixtures';
import { e2ePort } from '../support/sandbox-env';
import { reloadApp } from '../support/navigate';

const HOST_PORT = e2ePort(8);

const pod = (name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput => ({
  metadata: { name, namespace: 'e2e', uid: `uid-${name}`, attempt: 0 },
  ...extra,
});

test('every page, the theme switch (persisted) and a favicon that is served', async ({ app }) => {
  const { page } = app;
  const notFound: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404) notFound.push(r.url());
  });
  await reloadApp(page);
  await expect(page.getByRole('grid', { name: 'Pod sandboxes' }).or(page.getByText('No pod sandboxes yet'))).toBeVisible();
  const icon = await page.request.get(new URL('/favicon.ico', page.url()).toString());
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toBe('image/x-icon');
  expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('./favicon.svg');
  expect(notFound, 'no 404 on load (favicon included)').toEqual([]);

  for (const [view, shot] of [
    ['Sandboxes', 'u1-10-page-sandboxes'],
    ['New sandbox', 'u1-11-page-new-sandbox'],
    ['CNI config', 'u1-12-page-cni'],
    ['Engine', 'u1-13-page-engine'],
  ] as const) {
    await app.goto(view);
    await expect(page.getByRole('navigation', { name: 'Main' }).locator('[aria-current="page"]')).toContainText(view);
    await app.screenshot(shot);
  }

  const theme = page.getByRole('radiogroup', { name: 'Theme' });
  await theme.getByRole('radio', { name: 'Dark' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  const darkBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await reloadApp(page);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(theme.getByRole('radio', { name: 'Dark' })).toHaveAttribute('aria-checked', 'true');
  await app.screenshot('u1-14-dark-theme');
  await theme.getByRole('radio', { name: 'Light' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(darkBg);
  await theme.getByRole('radio', { name: 'System' }).click();
  await expect(theme.getByRole('radio', { name: 'System' })).toHaveAttribute('aria-checked', 'true');
});

test('form errors say what to type, the bad field is scrolled into view, import warnings stay in sight', async ({ app, env }) => {
  const { page } = app;
  await app.goto('New sandbox');
  await app.form.fillMetadata('e2e-form', 'e2e');
  await test.step('bandwidth: "10Q" with unit M is not "10QM"; the error gives examples, not a regular expression', async () => {
    await app.form.setBandwidth('ingress', '10Q', 'M');
    const err = app.form.bandwidthError('ingress');
    await expect(err).toContainText('"10Q" is not a number: with the unit set to M, type only the number (e.g. 10 or 2.5)');
    await expect(err).not.toContainText('10QM');
    await expect(err).not.toContainText('regular expression');
    await app.form.setBandwidth('egress', '5X', '');
    await expect(app.form.bandwidthError('egress')).toContainText('"5X" is not a bandwidth. Accepted: bits per second from 1k to 1P');
    await expect(app.form.bandwidthError('egress')).toContainText('e.g. 10M, 512k, 1.5G, 100Mi');
    // typing a suffix while a unit is picked moves it into the unit box
    await app.form.setBandwidth('ingress', '10M', 'k');
    await expect(app.form.field('ingress bandwidth')).toHaveValue('10');
    await expect(app.form.field('ingress bandwidth unit')).toHaveValue('M');
    await app.form.setBandwidth('egress', '', '');
  });
  await test.step('hostname: the error says why', async () => {
    await app.form.field('Hostname').fill('my host');
    await expect(page.getByText('hostname contains a space')).toBeVisible();
    await app.form.field('Hostname').fill('web_1');
    await expect(page.getByText('hostname contains "_": only letters, digits, "-" and "." are allowed')).toBeVisible();
  });
  await test.step('after submit the bad field is focused and visible below the sticky bar', async () => {
    await app.form.form.evaluate((f) => f.scrollTo(0, f.scrollHeight));
    await app.form.submit();
    const host = app.form.field('Hostname');
    await expect(host).toBeFocused();
    const bar = await page.locator('.form-bar').boundingBox();
    await expect.poll(async () => (await host.boundingBox())!.y).toBeGreaterThan(bar!.y + bar!.height);
    await app.screenshot('u1-20-focused-field-below-bar');
    expect(await env.engine.list()).toEqual([]);
  });
  await test.step('import warnings show where the user is looking', async () => {
    await app.form.form.evaluate((f) => f.scrollTo(0, f.scrollHeight));
    await app.form.importCrictl(
      JSON.stringify({ metadata: { name: 'imp', namespace: 'e2e', uid: 'u-imp' }, portMappings: [], hostname: 'imp' }),
    );
    const notice = page.getByTestId('import-notice');
    await expect(notice).toContainText('portMappings: unknown key');
    // the import started at the bottom of the form: the notice (in the flow, so it never covers a field) brings
    // itself into view and takes the focus: readable where the user is, whole, and not under the sticky bar
    await expect(notice).toBeFocused();
    await expect(notice.getByText('portMappings: unknown key')).toBeInViewport({ ratio: 1 });
    const bar = (await page.locator('.form-bar').boundingBox())!;
    const box = (await notice.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(bar.y + bar.height - 1);
    expect(box.height).toBeGreaterThan(40);
    await app.screenshot('u1-21-import-warnings-in-view');
  });
});

test('a name/uid clash offers to open the existing sandbox or use a new uid', async ({ app, env }) => {
  const existing = await env.engine.run({ config: pod('e2e-clash') });
  await app.goto('New sandbox');
  await app.form.importCrictl(JSON.stringify(pod('e2e-clash')));
  await app.form.submit();
  const clash = app.page.getByTestId('name-clash');
  await expect(clash).toBeVisible({ timeout: 60_000 });
  await expect(clash.getByRole('button', { name: 'Use a new uid' })).toBeInViewport();
  await expect(app.page.getByTestId('run-progress')).toContainText('AlreadyExists');
  await app.screenshot('u1-22-name-clash');
  await clash.getByRole('button', { name: 'Use a new uid' }).click();
  await expect(app.form.field('UID')).not.toHaveValue('uid-e2e-clash');
  await expect(app.page.getByTestId('run-progress')).toHaveCount(0);
  // the same clash again, this time opening the existing one
  await app.form.field('UID').fill('uid-e2e-clash');
  await app.form.submit();
  await app.page.getByTestId('name-clash').getByRole('button', { name: 'Open the existing sandbox' }).click();
  await expect(app.detail.header).toContainText('e2e-clash');
  await expect(app.page.locator('[aria-current="page"]')).toContainText('Sandboxes');
  expect((await env.engine.list()).map((p) => p.id)).toEqual([existing.id]);
});

test('label selectors, bulk actions on visible rows only, a hidden pod closes, the split is draggable and remembered, stopped pods release ports', async ({
  app,
  env,
}) => {
  const { page } = app;
  const web = await env.engine.run({
    config: pod('e2e-web', {
      labels: { app: 'web', tier: 'fe' },
      port_mappings: [{ protocol: 0, container_port: 80, host_port: HOST_PORT }],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M' },
    }),
  });
  await env.engine.run({ config: pod('e2e-db', { labels: { app: 'db' } }) });
  await env.engine.run({ config: pod('e2e-api', { labels: { app: 'api', tier: 'be' } }) });
  await expect(app.pods.row('e2e-api')).toBeVisible();

  await test.step('the list fills the window when nothing is open', async () => {
    const grid = await app.pods.grid.boundingBox();
    const viewport = page.viewportSize()!;
    expect(grid!.y + grid!.height).toBeGreaterThan(viewport.height - 60);
    await expect(page.getByTestId('pods-split')).toHaveCount(0);
    await app.screenshot('u1-30-list-fills-window');
  });

  await test.step('Kubernetes selector syntax, and syntax errors shown', async () => {
    const label = page.getByLabel('Label selector');
    const names = async () =>
      (await page.locator('[role="row"][data-pod-name]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-pod-name')))).sort();
    await label.fill('app in (web,api)');
    await expect.poll(names).toEqual(['e2e-api', 'e2e-web']);
    await label.fill('!tier');
    await expect.poll(names).toEqual(['e2e-db']);
    await label.fill('tier notin (fe)');
    await expect.poll(names).toEqual(['e2e-api', 'e2e-db']);
    await label.fill('tier,app!=api');
    await expect.poll(names).toEqual(['e2e-web']);
    await label.fill('app in (web');
    await expect(page.getByTestId('label-selector-error')).toHaveText('missing ")" to close the "in" list (at column 12)');
    await expect(label).toHaveAttribute('aria-invalid', 'true');
    await app.screenshot('u1-31-label-selector-error');
    await label.fill('');
  });

  await test.step('bulk actions skip checked rows the filter hides', async () => {
    await page.getByLabel('Select e2e-web').check();
    await page.getByLabel('Select e2e-db').check();
    await page.getByLabel('Label selector').fill('app=db');
    const bulk = page.getByTestId('bulk');
    await expect(bulk).toContainText('1 selected');
    await expect(page.getByTestId('bulk-hidden')).toContainText('1 hidden by the filter');
    await expect(bulk.getByRole('button', { name: /^Stop/ })).toHaveText('Stop');
    await expect(bulk.getByRole('button', { name: /^Remove/ })).toHaveText('Remove');
    await app.screenshot('u1-32-bulk-hidden-by-filter');
    await page.getByLabel('Label selector').fill('');
    await expect(bulk.getByRole('button', { name: /^Remove/ })).toHaveText('Remove 2');
    await page.getByLabel('Select all').check();
    await page.getByLabel('Select all').uncheck();
  });

  await test.step('the split between list and detail drags and is remembered', async () => {
    await app.pods.open('e2e-web');
    await expect(app.detail.header).toContainText('e2e-web');
    const handle = page.getByTestId('pods-split');
    await expect(handle).toBeVisible();
    const before = Number(await handle.getAttribute('aria-valuenow'));
    const box = (await handle.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    // the list takes its rows' height up to its share, so the handle sits under the last row: dragged up, the share
    // becomes where it was dropped
    await page.mouse.move(box.x + box.width / 2, box.y - 60, { steps: 5 });
    await page.mouse.up();
    await expect.poll(async () => Number(await handle.getAttribute('aria-valuenow'))).toBeLessThan(before);
    const after = Number(await handle.getAttribute('aria-valuenow'));
    await app.screenshot('u1-33-split-dragged');
    await reloadApp(page);
    await app.pods.open('e2e-web');
    await expect(page.getByTestId('pods-split')).toHaveAttribute('aria-valuenow', String(after));
  });

  await test.step('a pod the filter hides closes its detail', async () => {
    await page.getByLabel('Label selector').fill('app=db');
    await expect(app.detail.header).toHaveCount(0);
    await expect(page.getByTestId('pods-split')).toHaveCount(0);
    await page.getByLabel('Label selector').fill('');
  });

  await test.step('Raw status also in the crictl inspectp shape', async () => {
    await app.pods.open('e2e-web');
    await app.detail.tab('Raw status');
    await page.getByRole('tab', { name: 'crictl inspectp' }).click();
    await expect(page.getByTestId('raw-caption')).toContainText(`crictl inspectp ${web.id.slice(0, 13)}`);
    const code = page.locator('.code-tall');
    await expect(code).toContainText('"status": {');
    await expect(code).toContainText('"state": "SANDBOX_READY"');
    await expect(code).toContainText('"info": {');
    await expect(code).toContainText('"cniResult": {');
    await app.screenshot('u1-34-raw-crictl-inspectp');
  });

  await test.step('a stopped pod shows its host ports and bandwidth as released at stop', async () => {
    await env.engine.stop(web.id);
    const ports = app.pods.row('e2e-web').locator('[data-col="host-ports"]');
    await expect(ports).toHaveAttribute('data-released', 'true');
    await expect(ports).toContainText(`${HOST_PORT}→80/tcp`);
    await expect(ports).toContainText('released at stop');
    await expect(app.pods.row('e2e-web').locator('[data-col="bandwidth"]')).toContainText('released at stop');
    await expect(app.pods.row('e2e-api').locator('[data-col="host-ports"]')).not.toHaveAttribute('data-released', 'true');
    await app.screenshot('u1-35-released-at-stop');
  });
});
