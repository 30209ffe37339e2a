/**
 * Reachability measured in the app: two pods on one host port. The form warns before the second is created, the
 * list marks both, the second's Ports tab says the first's DNAT rule wins, and pressing Probe shows its host-port
 * paths shadowed by the first while the first's are measured reachable (green, with the time of measurement), under
 * the heading of the one network they cross (eth0).
 */
import { test, expect } from '../support/fixtures';
import { e2ePort } from '../support/sandbox-env';

const HOST_PORT = e2ePort(2);

test('probe: a contested host port is shadowed, the winner is reachable, and the form warns first', async ({ app, env }) => {
  const { page } = app;
  const { id: first } = await env.engine.run({
    config: {
      metadata: { name: 'probe-first', namespace: 'e2e', uid: 'u-probe-first' },
      port_mappings: [{ container_port: 80, host_port: HOST_PORT }],
    },
  });

  await test.step('the form warns that the host port is already held, naming the holder', async () => {
    await app.goto('New sandbox');
    await app.form.fillMetadata('probe-second', 'e2e');
    await app.form.addPort(1, { containerPort: 81, hostPort: HOST_PORT });
    const warning = page.getByTestId('preview-host-port-conflicts');
    await expect(warning).toContainText(`${HOST_PORT}/tcp`);
    await expect(warning).toContainText(first.slice(0, 12));
    await app.screenshot('probe-01-form-conflict');
    await app.form.submit();
    await app.form.waitCreated();
    await app.form.openCreated();
  });

  await test.step('the list marks both pods', async () => {
    await app.goto('Sandboxes');
    await expect(app.pods.row('probe-first').getByTestId('host-port-clash')).toBeVisible();
    await expect(app.pods.row('probe-second').getByTestId('host-port-clash')).toBeVisible();
  });

  await test.step("the second pod: the first's DNAT rule wins; Probe measures its host-port paths shadowed", async () => {
    await app.pods.open('probe-second');
    await app.detail.tab('Port mappings');
    await expect(page.getByTestId('host-port-conflicts')).toHaveAttribute('data-testid', 'host-port-conflicts');
    await expect(page.getByTestId('host-port-conflicts').locator(`[data-winner="${first}"]`)).toContainText('first matching jump');
    // the kernel has the second pod's rule, but it is not marked as working: the first pod's jump comes first
    await expect(page.getByTestId('live-ports').getByTestId('dnat-shadowed')).toContainText(first.slice(0, 12));
    await app.detail.tab('Reachability');
    await page.getByTestId('probe-button').click();
    const rows = page.getByTestId('reach-paths').locator('tbody tr[data-kind="hostPort"]');
    await expect(rows.first()).toHaveAttribute('data-verdict', 'shadowed');
    await expect(page.getByTestId('reach-paths').locator('tbody tr[data-kind="hostPort"][data-verdict="reachable"]')).toHaveCount(0);
    await expect(rows.first().getByTestId('reach-answered-by')).toContainText(first.slice(0, 12));
    await expect(page.getByTestId('reach-measured-at')).toContainText('by TCP connect');
    await page.getByTestId('reachability').scrollIntoViewIfNeeded();
    await app.screenshot('probe-02-second-shadowed');
  });

  await test.step('the first pod: every path measured reachable, green', async () => {
    await app.goto('Sandboxes');
    await app.pods.open('probe-first');
    await app.detail.tab('Reachability');
    await page.getByTestId('probe-button').click();
    const reach = page.getByTestId('reachability');
    await expect(reach.locator('tbody tr[data-kind="hostPort"]').first()).toHaveAttribute('data-verdict', 'reachable');
    await expect(reach.locator('tbody tr[data-kind="peer"]').first()).toHaveAttribute('data-verdict', 'reachable');
    await expect(reach.locator('tbody tr[data-verdict="reachable"] .pill-ok').first()).toBeVisible();
    // the paths are grouped by the network they cross: one network here, eth0, its chain in the heading
    const group = reach.getByTestId('reach-network');
    await expect(group).toHaveCount(1);
    await expect(group).toHaveAttribute('data-interface', 'eth0');
    await expect(group.getByTestId('reach-network-heading')).toContainText('bridge → portmap → bandwidth');
    await expect(group.locator('tr[data-kind]:not([data-interface="eth0"])')).toHaveCount(0);
    await reach.scrollIntoViewIfNeeded();
    await app.screenshot('probe-03-first-reachable');
  });
});

test('probe: on a crowded network only the newest peers are measured, and the panel says how many of how many', async ({ app, env }) => {
  const { page } = app;
  // five peers and the pod itself on the bridge: the probe starts a Node agent per measured peer, so it takes 4
  const made: string[] = [];
  for (let i = 0; i < 6; i++)
    made.push((await env.engine.run({ config: { metadata: { name: `crowd-${i}`, namespace: 'e2e', uid: `u-crowd-${i}` } } })).id);

  await app.goto('Sandboxes');
  await app.pods.open('crowd-0');
  await app.detail.tab('Reachability');
  await page.getByTestId('probe-button').click();
  const reach = page.getByTestId('reachability');
  await expect(page.getByTestId('reach-peers')).toContainText('peers: newest 4 of 5');
  // the pod's connects to peers were answered by the four newest peers, never by the oldest one
  const answered = await reach.locator('tbody tr[data-kind="peer"] [data-testid="reach-answered-by"]').allInnerTexts();
  const seen = new Set(answered.map((text) => made.find((id) => text.includes(id.slice(0, 12)))));
  expect(seen).toEqual(new Set(made.slice(2)));
  await reach.scrollIntoViewIfNeeded();
  await app.screenshot('probe-04-crowded-network');
});
