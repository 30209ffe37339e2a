/**
 * What plugins change in place, in the app: a lab run of host-device on a veth end (this kernel has no dummy links)
 * shows the host link moved into the run's netns by ADD and left DOWN after DEL, before → after; a pod on a
 * bridge+firewall+tuning+sbr network shows each plugin's effect, read from the kernel, with its owner.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';
import { E2E_LEASE } from '../support/sandbox-env';

// names and the subnet from the worker's lease (testkit/allocator.ts): specs in other workers run at the same time
const HOST_LINK = E2E_LEASE.name('hd0');
const HOST_LINK_PEER = E2E_LEASE.name('hd1');
const EFFECTS_NET = E2E_LEASE.name('effects');
const reload = (engine: object) => (engine as { reloadCniConfig?: () => Promise<unknown> }).reloadCniConfig?.call(engine);
const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'ignore' });
const quietly = (f: () => unknown) => {
  try {
    f();
  } catch {
    // already gone
  }
};

test('lab: a host link host-device moved and left DOWN shows before → after, and is no "no leak"', async ({ app }) => {
  quietly(() => ip('link', 'del', HOST_LINK));
  ip('link', 'add', HOST_LINK, 'type', 'veth', 'peer', 'name', HOST_LINK_PEER);
  ip('link', 'set', HOST_LINK_PEER, 'up');
  ip('link', 'set', HOST_LINK, 'up');
  try {
    await app.goto('CNI lab');
    await app.page.getByLabel('Conflist').fill(
      JSON.stringify(
        {
          cniVersion: '1.0.0',
          name: E2E_LEASE.name('hdnet'),
          plugins: [{ type: 'host-device', device: HOST_LINK, ipam: { type: 'static', addresses: [{ address: '10.84.0.5/24' }] } }],
        },
        null,
        2,
      ),
    );
    await expect(app.page.getByText('valid', { exact: true })).toBeVisible();
    await app.page.getByRole('button', { name: 'Run', exact: true }).click();
    const run = app.page.getByTestId('lab-run');
    const verdict = run.getByTestId('lab-verdict');
    await expect(verdict).toContainText('DEL did not put back');
    await expect(verdict.getByTestId('lab-change').first()).toContainText('UP → DOWN');
    await expect(run.getByTestId('lab-changed-by-add')).toContainText(`${HOST_LINK} netns`);
    await expect(run.getByTestId('lab-changed-after-del')).toContainText('by host-device');
    await run.getByTestId('lab-changed-after-del').scrollIntoViewIfNeeded();
    await app.screenshot('40-lab-changed-items');
    await verdict.scrollIntoViewIfNeeded();
    await app.screenshot('40-lab-changed-verdict');
  } finally {
    quietly(() => ip('link', 'del', HOST_LINK));
  }
});

test("pod detail: firewall's, tuning's and sbr's effects read from the kernel, each with its owner", async ({ app, env }) => {
  const confFile = join(env.options.cniConfDir!, '00-pls-effects.conflist');
  const ipamDir = mkdtempSync('/tmp/pls-e2e-ipam-');
  writeFileSync(
    confFile,
    JSON.stringify({
      cniVersion: '1.0.0',
      name: EFFECTS_NET,
      plugins: [
        {
          type: 'bridge',
          bridge: EFFECTS_NET,
          isGateway: true,
          ipMasq: false,
          ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet: E2E_LEASE.subnet4(9) }]] },
        },
        { type: 'firewall' },
        { type: 'tuning', mtu: 1450, sysctl: { 'net.ipv4.conf.eth0.proxy_arp': '1' } },
        { type: 'sbr' },
      ],
    }),
  );
  let id = '';
  try {
    // the first network in name order is the pod's (reloaded now rather than waiting for the conf-dir watcher)
    await reload(env.engine);
    await expect.poll(async () => (await env.engine.cniConfig()).networks.find((n) => n.source)?.name).toBe(EFFECTS_NET);
    id = (await env.engine.run({ config: { metadata: { name: 'pls-effects', namespace: 'e2e', uid: 'u-pls-effects' } } })).id;
    await app.goto('Sandboxes');
    await app.pods.open('pls-effects');
    await app.detail.tab('Network');
    const panel = app.page.getByTestId('plugin-effects');
    await expect(panel).toHaveAttribute('data-live-state', 'ok');
    await expect(panel.locator('[data-plugin="firewall"]').first()).toContainText('CNI-FORWARD');
    await expect(panel.locator('[data-plugin="tuning"]').first()).toContainText('net.ipv4.conf.eth0.proxy_arp = 1');
    await expect(panel.locator('[data-plugin="sbr"]').first()).toContainText('lookup');
    await expect(panel).toContainText(`${EFFECTS_NET}/eth0`);
    await panel.scrollIntoViewIfNeeded();
    await app.screenshot('41-pod-plugin-effects');

    // stopped: the netns is gone, so nothing can be read; the panel says so and keeps no green mark from before
    await app.detail.stop();
    await app.detail.expectState('NotReady');
    await expect(panel).toHaveAttribute('data-live-state', 'absent');
    await expect(panel.getByTestId('live-absent')).toContainText(/is stopped/);
    await expect(panel.getByTestId('plugin-effect')).toHaveCount(0);
    await expect(panel.locator('.pill-ok')).toHaveCount(0);
    await panel.scrollIntoViewIfNeeded();
    await app.screenshot('41b-pod-plugin-effects-stopped');
  } finally {
    if (id) {
      await env.engine.stop(id).catch(() => undefined);
      await env.engine.remove(id).catch(() => undefined);
    }
    unlinkSync(confFile);
    await reload(env.engine);
    await expect.poll(async () => (await env.engine.cniConfig()).networks.find((n) => n.source)?.name).not.toBe(EFFECTS_NET);
    quietly(() => ip('link', 'del', EFFECTS_NET));
    rmSync(ipamDir, { recursive: true, force: true });
  }
});
