/**
 * The main path with the real engine and real plugins: create through the form, read every network fact back in
 * the detail, stop, remove.
 */
import { test, expect } from '../support/fixtures';
import { E2E_NETWORK, E2E_SUBNET_N, E2E_V4_PREFIX, e2ePort } from '../support/sandbox-env';

const HOST_PORT = e2ePort(5);

const V4_PREFIX = E2E_V4_PREFIX.replace(/\./g, '\\.');
const V4 = new RegExp(`^${V4_PREFIX}\\.\\d+$`);
const V4_IN = new RegExp(`${V4_PREFIX}\\.\\d+`);
const V6_IN = new RegExp(`fd00:${E2E_SUBNET_N}::[0-9a-f]+`);

test('create a pod through the form, inspect it, stop it and remove it', async ({ app, env }) => {
  const { page } = app;
  await app.pods.expectEmpty();
  await app.expectNoEngineProblems();
  await app.screenshot('01-pods-empty');

  await test.step('fill the form: two port mappings (one with host port 0) and both bandwidth annotations', async () => {
    await app.goto('New sandbox');
    await app.form.fillMetadata('e2e-web', 'e2e');
    await app.form.addPort(1, { containerPort: 80, hostPort: HOST_PORT });
    await app.form.addPort(2, { protocol: 'UDP', containerPort: 5353, hostPort: 0 });
    await app.form.setBandwidth('ingress', '10', 'M');
    await app.form.setBandwidth('egress', '512', 'k');
    await expect(app.form.bandwidthError('ingress')).toHaveCount(0);
    // The preview is the engine's answer for the loaded conflist: portmap gets one mapping, bandwidth both rates.
    await expect(app.form.pluginPreview('portmap')).toContainText(`"hostPort": ${HOST_PORT}`);
    await expect(app.form.pluginPreview('portmap')).not.toContainText('5353');
    await expect(app.form.pluginPreview('bandwidth')).toContainText('"ingressRate": 10000000');
    await expect(app.form.pluginPreview('bandwidth')).toContainText('"egressRate": 512000');
    await app.screenshot('02-create-form-preview');
  });

  await test.step('submit and follow the steps', async () => {
    await app.form.submit();
    await app.form.waitCreated();
    await expect(page.getByTestId('run-progress').locator('.step-ok').first()).toBeVisible();
    await app.screenshot('03-create-progress');
    await app.form.openCreated();
  });

  const [created] = await env.engine.list();
  expect(created).toBeDefined();

  await test.step('the list shows the pod with its IPv4 pod IP', async () => {
    await expect(app.pods.row('e2e-web')).toBeVisible();
    await expect(app.pods.ipCell('e2e-web')).toHaveText(V4);
    await expect(app.pods.row('e2e-web')).toContainText(`${HOST_PORT}→80/tcp`);
    await app.screenshot('04-pods-list-detail');
  });

  await test.step('network: primary IPv4, additional IPv6, the reason', async () => {
    await app.detail.tab('Network');
    await expect(app.detail.primaryIp).toContainText(V4_IN);
    await expect(app.detail.additionalIps).toContainText(V6_IN);
    await expect(page.getByText(/preference ipv4: the first IPv4 address on eth0/)).toBeVisible();
    await app.screenshot('05-detail-network');
  });

  const podIp = (await env.engine.status(created!.id)).ip;
  expect(podIp).toMatch(V4);

  await test.step('network, live in the netns: the kernel has what the CNI result claims', async () => {
    const live = app.detail.live('live-network');
    await live.scrollIntoViewIfNeeded();
    await app.detail.expectLiveRead('live-network');
    const eth0 = app.detail.liveInterface('eth0');
    await expect(eth0).toHaveAttribute('data-present', 'true');
    await expect(eth0.locator(`li[data-address="${podIp}"]`)).toHaveAttribute('data-mark', 'both');
    await expect(eth0.locator('li[data-mark^="cni-only"]')).toHaveCount(0);
    await expect(live.getByTestId('live-network-summary')).toContainText('Every address and route the CNI result lists is in the kernel');
    await expect(live.getByTestId('live-routes').locator('tr[data-dst="default"]').first()).toContainText('listed');
    await app.screenshot('05b-network-live');
  });

  await test.step('port mappings: the host-port-0 mapping is marked dropped and explained', async () => {
    await app.detail.tab('Port mappings');
    await expect(app.detail.portRows).toHaveCount(2);
    await expect(app.detail.portRows.nth(0)).toHaveAttribute('data-passed', 'true');
    await expect(app.detail.portRows.nth(1)).toHaveAttribute('data-passed', 'false');
    await expect(app.detail.portRows.nth(1)).toContainText('dropped before CNI');
    await expect(app.detail.portRows.nth(1)).toContainText('host_port 0');
    await app.screenshot('06-detail-ports');
  });

  await test.step('port mappings, live: the DNAT rule for the host port → pod IP:80, none for the dropped mapping', async () => {
    await app.detail.live('live-ports').scrollIntoViewIfNeeded();
    await app.detail.expectLiveRead('live-ports');
    const first = app.detail.livePortRow(0);
    await expect(first).toHaveAttribute('data-found', 'true');
    await expect(first).toContainText('DNAT rule found');
    // the pod is dual-stack: one DNAT per family, the IPv4 one first
    const rules = first.getByTestId('dnat-rule');
    await expect(rules).toHaveCount(2);
    await expect(rules.nth(0)).toContainText(
      new RegExp(`^-A CNI-DN-\\S+ .*-p tcp .*--dport ${HOST_PORT} -j DNAT --to-destination ${podIp!.replace(/\./g, '\\.')}:80$`),
    );
    await expect(rules.nth(1)).toContainText(
      new RegExp(`^-A CNI-DN-\\S+ .*-p tcp .*--dport ${HOST_PORT} -j DNAT --to-destination \\[fd00:${E2E_SUBNET_N}::[0-9a-f]+\\]:80$`),
    );
    const dropped = app.detail.livePortRow(1);
    await expect(dropped).toHaveAttribute('data-found', 'false');
    await expect(dropped).toContainText('none expected');
    await expect(dropped).toContainText('no DNAT rule is expected');
    await app.screenshot('06b-ports-live');
  });

  await test.step('bandwidth: annotation → bits/s → human, and what the plugin received', async () => {
    await app.detail.tab('Bandwidth');
    await expect(app.detail.bandwidthRow('ingress')).toContainText('10000000');
    await expect(app.detail.bandwidthRow('ingress')).toContainText('10 Mbit/s');
    await expect(app.detail.bandwidthRow('egress')).toContainText('512000');
    await expect(app.detail.bandwidthRow('egress')).toContainText('512 kbit/s');
    await app.screenshot('07-detail-bandwidth');
  });

  await test.step('bandwidth, applied in the kernel: tbf 10 Mbit/s on the host veth, 512 kbit/s on the ifb', async () => {
    await app.detail.expectLiveRead('live-bandwidth');
    await expect(page.getByTestId('bw-live-answer')).toHaveText(
      /^Every annotated rate is configured in the kernel \(tc settings read, not measured/,
    );
    const ingress = app.detail.bandwidthLive('ingress');
    await expect(ingress).toHaveAttribute('data-verdict', 'applied');
    await expect(ingress.getByTestId('bw-applied-ingress')).toContainText('tbf 10 Mbit/s');
    await expect(ingress.getByTestId('bw-applied-ingress')).toContainText('host end of the pod veth');
    await expect(ingress.getByTestId('bw-verdict-ingress')).toHaveText(/✓\s*applied/);
    const egress = app.detail.bandwidthLive('egress');
    await expect(egress).toHaveAttribute('data-verdict', 'applied');
    await expect(egress.getByTestId('bw-applied-egress')).toContainText('tbf 512 kbit/s');
    await expect(egress.getByTestId('bw-applied-egress')).toContainText('ifb');
    await expect(egress.getByTestId('bw-verdict-egress')).toHaveText(/✓\s*applied/);
    // Refresh re-reads the kernel: the collected-at time moves on
    const before = await app.detail.live('live-bandwidth').getByTestId('live-collected-at').getAttribute('title');
    await app.detail
      .live('live-bandwidth')
      .getByRole('button', { name: /^Refresh/ })
      .click();
    await expect(app.detail.live('live-bandwidth').getByTestId('live-collected-at')).not.toHaveAttribute('title', before!);
    await expect(ingress).toHaveAttribute('data-verdict', 'applied');
    await app.screenshot('07b-bandwidth-applied');
  });

  await test.step('CNI trace: one ADD per plugin, stdin with runtimeConfig', async () => {
    await app.detail.tab('CNI trace');
    const adds = app.detail.traceItems.and(page.locator('[data-verb="ADD"][data-phase="run"]'));
    await expect(adds).toHaveCount(4);
    for (const plugin of ['loopback', 'bridge', 'portmap', 'bandwidth']) {
      await expect(adds.and(page.locator(`[data-plugin="${plugin}"]`))).toHaveCount(1);
    }
    const portmap = adds.and(page.locator('[data-plugin="portmap"]'));
    await portmap.getByRole('button').first().click();
    await expect(portmap.locator('.line-hl').first()).toContainText('"runtimeConfig"');
    await expect(portmap.locator('.code').last()).toContainText(`"hostPort": ${HOST_PORT}`);
    await app.screenshot('08-detail-cni-trace');
    // the theme follows the OS
    await page.emulateMedia({ colorScheme: 'dark' });
    await app.screenshot('08b-detail-cni-trace-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await test.step('lifecycle and raw status', async () => {
    await app.detail.tab('Lifecycle');
    await expect(page.locator('.wf-row', { hasText: 'netns.create' })).toBeVisible();
    await app.screenshot('09-detail-lifecycle');
    await app.detail.tab('Overview');
    await expect(page.getByText(created!.id).first()).toBeVisible();
  });

  await test.step('stop: NotReady and no IP', async () => {
    await app.detail.stop();
    await app.detail.expectState('NotReady');
    await expect(app.pods.ipCell('e2e-web')).toHaveText('—');
    await app.screenshot('10-stopped');
  });

  await test.step('stopped, live: the netns is gone, said as a note rather than an error', async () => {
    await app.detail.tab('Bandwidth');
    const live = app.detail.live('live-bandwidth');
    await expect(live).toHaveAttribute('data-live-state', 'absent');
    await expect(live.getByTestId('live-absent')).toContainText(/is stopped: its network namespace .* was removed/);
    await expect(live.getByRole('alert')).toHaveCount(0);
    await app.detail.tab('Network');
    await expect(page.getByTestId('cni-result-released')).toContainText('released by CNI DEL');
    await expect(app.detail.live('live-network')).toHaveAttribute('data-live-state', 'absent');
    await expect(page.getByTestId('topology')).toHaveAttribute('data-live-state', 'absent');
    await app.detail.live('live-network').scrollIntoViewIfNeeded();
    await app.screenshot('10b-stopped-live');
  });

  await test.step('remove (confirmed): the pod disappears', async () => {
    await app.detail.remove();
    await expect(app.pods.row('e2e-web')).toHaveCount(0);
    await app.pods.expectEmpty();
    expect(await env.engine.list()).toEqual([]);
  });
});

test('the CNI configuration panel shows the loaded conflist and capabilities', async ({ app }) => {
  await app.goto('CNI config');
  const panel = app.page.getByTestId('cni-panel');
  await expect(panel.getByRole('heading', { name: E2E_NETWORK })).toBeVisible();
  for (const type of ['bridge', 'portmap', 'bandwidth'])
    await expect(panel.locator('td.mono > b').filter({ hasText: new RegExp(`^${type}$`) })).toHaveCount(1);
  await expect(panel).toContainText('portMappings');
  await app.screenshot('11-cni-config');
});
