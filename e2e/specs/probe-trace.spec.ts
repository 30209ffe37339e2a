/**
 * Why a path failed, in the app: a foreign DROP rule in filter OUTPUT for the pod's IP makes its host-port paths time
 * out; Why? on such a path traces it through the kernel and shows the steps, the DROP rule highlighted with "no
 * plugin here", the DNAT before it owned by portmap. Trace on a reachable path shows where it was answered.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { test, expect } from '../support/fixtures';
import { e2ePort } from '../support/sandbox-env';

const HOST_PORT = e2ePort(4);
const SHOTS = process.env.PODSCOPE_SHOTS_DIR;

test('probe trace: Why? names the foreign DROP rule and who installed each rule; Trace explains a reachable path', async ({ app, env }) => {
  const { page } = app;
  const { id } = await env.engine.run({
    config: {
      metadata: { name: 'web', namespace: 'e2e', uid: 'u-trace-web' },
      port_mappings: [{ container_port: 8080, host_port: HOST_PORT }],
    },
  });
  const ip = (await env.engine.status(id)).ip;
  const rule = ['OUTPUT', '-d', `${ip}/32`, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'fw-block', '-j', 'DROP'];
  const shot = async (name: string) => {
    await app.screenshot(name);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      copyFileSync(`e2e/artifacts/${name}.png`, `${SHOTS}/${name}.png`);
    }
  };
  execFileSync('iptables', ['-I', ...rule]);
  try {
    await app.goto('Sandboxes');
    await app.pods.open('web');
    await app.detail.tab('Reachability');
    await page.getByTestId('probe-button').click();
    const reach = page.getByTestId('reachability');
    const row = reach.locator('tbody tr[data-kind="hostPort"]').first();
    await expect(row).toHaveAttribute('data-verdict', 'timeout');
    await row.getByTestId('reach-why').click();
    const trace = reach.getByTestId('path-trace');
    await expect(trace.getByTestId('trace-why')).toContainText('dropped in filter/OUTPUT of the host');
    await expect(trace.getByTestId('trace-why')).toContainText('a rule no CNI plugin installed');
    const decisive = trace.locator('[data-decisive="true"]');
    await expect(decisive).toContainText('fw-block');
    await expect(decisive.getByTestId('trace-owner')).toHaveText('no plugin here');
    await expect(trace.getByTestId('trace-owner').filter({ hasText: `portmap · ` }).first()).toContainText('pod e2e/web');
    await trace.scrollIntoViewIfNeeded();
    await shot('trace-01-why-drop');
  } finally {
    execFileSync('iptables', ['-D', ...rule]);
  }
  await app.detail.tab('Reachability');
  await page.getByTestId('probe-button').click();
  const reach = page.getByTestId('reachability');
  const gw = reach.locator('tbody tr[data-kind="gateway"]').first();
  await expect(gw).toHaveAttribute('data-verdict', 'reachable');
  await expect(gw.getByTestId('reach-why')).toHaveText('Trace');
  await gw.getByTestId('reach-why').click();
  await expect(reach.getByTestId('trace-why')).toContainText('answered in the host');
  await reach.getByTestId('path-trace').scrollIntoViewIfNeeded();
  await shot('trace-02-trace-reachable');
});
