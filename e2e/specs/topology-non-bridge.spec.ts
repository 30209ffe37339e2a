/**
 * The pod's diagram for pods without a bridge, with the real engine and Debian's plugins: a ptp + bandwidth pod
 * (veth, the host's /32 route, the ifb redirect) and a macvlan pod on a veth parent the spec makes (parent, and that
 * parent's own veth peer), each edge kind drawn distinguishably and each owned node and edge with its plugin's badge.
 * The spec's conflist is sorted before the env's own while it runs, then removed; the veth pair is deleted.
 */
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';
import { E2E_LEASE, type SandboxEnv } from '../support/sandbox-env';

// the macvlan parent's veth pair and the subnets from the worker's lease (testkit/allocator.ts)
const PARENT = E2E_LEASE.name('mvpa');
const PARENT_PEER = E2E_LEASE.name('mvpb');

const linkExists = (name: string) => {
  try {
    execFileSync('ip', ['link', 'show', 'dev', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Puts this conflist first in the env's conf dir and waits until the engine has loaded it as its network. */
async function useNetwork(env: SandboxEnv, list: { name: string }): Promise<() => Promise<void>> {
  const file = join(env.options.cniConfDir!, '05-topology-e2e.conflist');
  await writeFile(file, JSON.stringify(list));
  await expect.poll(async () => (await env.engine.cniConfig()).networks.find((n) => !n.builtin)?.name, { timeout: 15_000 }).toBe(list.name);
  return async () => {
    await rm(file, { force: true });
    await expect
      .poll(async () => (await env.engine.cniConfig()).networks.find((n) => !n.builtin)?.name, { timeout: 15_000 })
      .not.toBe(list.name);
  };
}

test('the diagram of a ptp + bandwidth pod and of a macvlan pod: routes, redirects, parents, owners', async ({ app, env }) => {
  const { page } = app;
  const ipam = (subnet: string) => ({ type: 'host-local', dataDir: join(env.root, 'ipam-topology'), ranges: [[{ subnet }]] });

  await test.step('ptp + bandwidth: eth0 → its veth, the route to the pod through it, the ifb the veth redirects to', async () => {
    const restore = await useNetwork(env, {
      name: 'ptpe-ptp',
      cniVersion: '1.0.0',
      plugins: [
        { type: 'ptp', ipam: ipam(E2E_LEASE.subnet4(10)) },
        { type: 'bandwidth', capabilities: { bandwidth: true } },
      ],
    } as { name: string });
    try {
      const { id } = await env.engine.run({
        config: {
          metadata: { name: 'e2e-ptp', namespace: 'e2e', uid: 'uid-e2e-ptp' },
          annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
        },
      });
      await app.pods.open('e2e-ptp');
      await app.detail.tab('Network');
      await expect(page.getByTestId('topo-measured-at')).toContainText('read from the kernel at');
      await expect(page.getByTestId('topo-node-pod-if-eth0')).toHaveAttribute('data-owner', 'ptp');
      await expect(page.getByTestId('topo-edge-veth')).toHaveCount(1);
      await expect(page.getByTestId('topo-edge-route')).toHaveCount(1);
      await expect(page.getByTestId('topo-edge-redirect')).toHaveCount(1);
      await expect(page.getByTestId('topo-edge-bridge-port')).toHaveCount(0);
      await expect(page.getByTestId('topology').locator('g[data-owner="bandwidth"]')).toHaveCount(2);
      await expect(page.getByTestId('topo-legend')).toContainText("the host's route to the pod address");
      await page.getByTestId('topology').scrollIntoViewIfNeeded();
      await app.screenshot('topology-01-ptp-bandwidth');
      await env.engine.stop(id);
      await env.engine.remove(id);
    } finally {
      await restore();
    }
  });

  await test.step(`macvlan on ${PARENT}: eth0 → its parent → the parent's veth peer`, async () => {
    if (linkExists(PARENT)) execFileSync('ip', ['link', 'del', PARENT]);
    execFileSync('ip', ['link', 'add', PARENT, 'type', 'veth', 'peer', 'name', PARENT_PEER]);
    for (const end of [PARENT, PARENT_PEER]) execFileSync('ip', ['link', 'set', end, 'up']);
    const restore = await useNetwork(env, {
      name: 'ptpe-mv',
      cniVersion: '1.0.0',
      plugins: [{ type: 'macvlan', master: PARENT, mode: 'bridge', ipam: ipam(E2E_LEASE.subnet4(11)) }],
    } as { name: string });
    try {
      const { id } = await env.engine.run({ config: { metadata: { name: 'e2e-mv', namespace: 'e2e', uid: 'uid-e2e-mv' } } });
      await app.goto('Sandboxes');
      await app.pods.open('e2e-mv');
      await app.detail.tab('Network');
      await expect(page.getByTestId('topo-node-pod-if-eth0')).toHaveAttribute('data-owner', 'macvlan');
      await expect(page.getByTestId(`topo-node-host-link-${PARENT}`)).toBeVisible();
      await expect(page.getByTestId('topo-edge-parent')).toHaveCount(1);
      await page.getByTestId('topology').scrollIntoViewIfNeeded();
      await app.screenshot('topology-02-macvlan');
      await env.engine.stop(id);
      await env.engine.remove(id);
    } finally {
      await restore();
      if (linkExists(PARENT)) execFileSync('ip', ['link', 'del', PARENT]);
    }
  });
});
