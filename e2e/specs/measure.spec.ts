/**
 * The measurements in the app with the real engine and Debian's plugins: the Bandwidth tab measures throughput through the
 * pod's veth (10 Mbit/s each way, past containerd's burst) and warns that shorter flows are not shaped; the Network
 * tab draws the pod's wiring read from the kernel, and a node leads to its row.
 */
import { test, expect } from '../support/fixtures';
import { E2E_BRIDGE, E2E_NETWORK } from '../support/sandbox-env';

test('measure throughput on the Bandwidth tab and follow the topology to the Network tab', async ({ app, env }) => {
  const { page } = app;
  const { id } = await env.engine.run({
    config: {
      metadata: { name: 'e2e-bw', namespace: 'e2e', uid: 'uid-e2e-bw' },
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
    },
  });
  await app.pods.open('e2e-bw');

  await test.step('Bandwidth: measure, requested vs measured, burst bytes, the short-flow warning', async () => {
    await app.detail.tab('Bandwidth');
    await page.getByTestId('tp-run').click();
    await expect(page.getByTestId('tp-progress')).toBeVisible();
    await expect(page.getByTestId('tp-ingress')).toHaveAttribute('data-verdict', 'shaped', { timeout: 40_000 });
    await expect(page.getByTestId('tp-egress')).toHaveAttribute('data-verdict', 'shaped');
    await expect(page.getByTestId('tp-requested-ingress')).toHaveText('10 Mbit/s');
    await expect(page.getByTestId('tp-measured-ingress')).toHaveText(/^(8\.\d+|9(\.\d+)?|1[01](\.\d+)?) Mbit\/s$/);
    await expect(page.getByTestId('tp-burst-ingress')).toHaveText(/^[\d,]+ B$/);
    await expect(page.getByTestId('tp-unshaped-ingress')).toContainText(/transfers smaller than \d+ MB are not shaped/);
    await expect(page.getByTestId('tp-measured-at')).toContainText('measured at');
    await page.getByTestId('throughput').scrollIntoViewIfNeeded();
    await app.screenshot('measure-01-throughput');
  });

  await test.step('Network: the topology from the kernel, and a node leads to its row', async () => {
    await app.detail.tab('Network');
    await expect(page.getByTestId('topo-measured-at')).toContainText('read from the kernel at');
    await expect(page.getByTestId('topo-node-pod-if-eth0')).toBeVisible();
    await expect(page.getByTestId(`topo-node-bridge-${E2E_BRIDGE}`)).toBeVisible();
    await expect(page.getByTestId('topo-edge-veth')).toHaveCount(1);
    await expect(page.getByTestId('topo-edge-redirect')).toHaveCount(1);
    await page.getByTestId('topology').scrollIntoViewIfNeeded();
    await app.screenshot('measure-02-topology');
    await page.getByTestId(`topo-node-bridge-${E2E_BRIDGE}`).click();
    await expect(page.locator(`[data-testid="interfaces"] tr[data-iface="${E2E_BRIDGE}"]`)).toHaveClass(/row-highlight/);
  });

  await test.step('CNI config: the whole network drawn from the kernel; a pod node opens that pod', async () => {
    await app.goto('CNI config');
    const net = page.getByTestId(`network-topology-${E2E_NETWORK}`);
    await net.getByRole('button', { name: 'Draw from the kernel' }).click();
    await expect(net).toContainText('1 ready pod');
    await expect(net.getByTestId('topo-node-pod-if-eth0')).toBeVisible();
    await net.scrollIntoViewIfNeeded();
    await app.screenshot('measure-03-network-topology');
    await net.getByTestId('topo-node-pod-if-eth0').click();
    await expect(page.getByTestId('topology')).toBeVisible();
  });

  expect((await env.engine.status(id)).state).toBe('SANDBOX_READY');
});
