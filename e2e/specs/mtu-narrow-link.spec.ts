/**
 * MTU in the app. A pod whose host veth is lowered below its eth0 (1400 < 1500): Probe reports the MTU black hole
 * beside the gateway path, and the Topology marks that host veth red with its MTU and why. A lab run on a bridge whose
 * MTU was set below the run's interface lists every link it created with its MTU and shows the run's MTU warning.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { test, expect } from '../support/fixtures';
import { E2E_LEASE, E2E_TMP_PREFIX } from '../support/sandbox-env';

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

/**
 * The host end of the pod's eth0: the host veth whose ifindex is eth0's link_index, read with `ip` inside the pod's
 * netns (nsenter --net keeps the host's /sys, so /sys/class/net there would be the host's own links).
 */
function hostVethOf(netnsPath: string): string {
  const [eth0] = JSON.parse(
    execFileSync('nsenter', [`--net=${netnsPath}`, 'ip', '-j', 'link', 'show', 'eth0'], { encoding: 'utf8' }),
  ) as Array<{ link_index?: number }>;
  const links = JSON.parse(ip('-j', 'link', 'show')) as Array<{ ifindex: number; ifname: string; link_type?: string }>;
  const veth = links.find((l) => l.ifindex === eth0?.link_index);
  if (!veth || !veth.ifname.startsWith('veth')) throw new Error(`no host veth for the pod's eth0 (link_index ${eth0?.link_index})`);
  return veth.ifname;
}

test('a lowered host veth: the black hole beside the path in Reachability, the veth marked in the Topology', async ({ app, env }) => {
  const { page } = app;
  const { id } = await env.engine.run({ config: { metadata: { name: 'mtu-web', namespace: 'e2e', uid: 'u-mtu-web' } } });
  const veth = hostVethOf((await env.engine.status(id)).netnsPath!);
  // the veth goes with the pod when the fixture removes it
  ip('link', 'set', 'dev', veth, 'mtu', '1400');

  await app.goto('Sandboxes');
  await app.pods.open('mtu-web');
  await app.detail.tab('Reachability');
  await page.getByTestId('probe-button').click();
  const gw = page.getByTestId('reachability').locator('tbody tr[data-kind="gateway"]').first();
  await expect(gw.getByTestId('reach-mtu')).toHaveAttribute('data-black-hole', 'true');
  await expect(gw.getByTestId('reach-mtu')).toContainText(`narrowest link: ${veth} (host) MTU 1400`);
  // the header says what was sent: the connects and the DF-set echoes of the MTU audit
  await expect(page.getByTestId('reach-measured-at')).toContainText('by TCP connect');
  await expect(page.getByTestId('reach-measured-at')).toContainText('DF-set ICMP echoes for the path MTU');
  await app.screenshot('mtu-01-reachability-black-hole');

  await app.detail.tab('Network');
  const topo = page.getByTestId('topology');
  const node = topo.getByTestId(`topo-node-host-veth-${veth}`);
  await expect(node).toHaveAttribute('data-mark', 'bad');
  await expect(node.getByTestId('topo-mark').locator('text')).toHaveText('black hole · MTU 1400');
  const narrow = topo.getByTestId('topo-narrow');
  await expect(narrow).toContainText(`host ${veth} MTU 1400`);
  await expect(narrow).toContainText('packets over 1400 vanish here without an ICMP "fragmentation needed"');
  await expect(narrow.locator('li').first()).toHaveAttribute('data-drawn', 'true');
  // nothing else is marked: the pod's eth0 is as wide as it says
  await expect(topo.locator('[data-mark]')).toHaveCount(1);
  await topo.scrollIntoViewIfNeeded();
  await app.screenshot('mtu-02-topology-narrow-link');
});

test("the lab shows each link's MTU and warns when the run's interface is wider than its bridge", async ({ app }) => {
  const bridge = E2E_LEASE.name('mtul');
  const subnet = E2E_LEASE.subnet4(7);
  const ipamDir = mkdtempSync(`/tmp/${E2E_TMP_PREFIX}lab-mtu-`);
  // an existing bridge whose MTU was set by hand stays at it when a wider port joins (the kernel adjusts only a
  // bridge whose MTU nobody set)
  ip('link', 'add', bridge, 'type', 'bridge');
  ip('link', 'set', 'dev', bridge, 'mtu', '1400');
  try {
    await app.goto('CNI lab');
    const conflist = {
      cniVersion: '1.0.0',
      name: bridge,
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: true,
          ipMasq: false,
          ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet }]] },
        },
      ],
    };
    await app.page.getByLabel('Conflist').fill(JSON.stringify(conflist, null, 2));
    await expect(app.page.getByText('valid', { exact: true })).toBeVisible();
    await app.page.getByRole('button', { name: 'Run', exact: true }).click();
    const run = app.page.getByTestId('lab-run');
    await expect(run.getByTestId('lab-verdict')).toBeVisible({ timeout: 30_000 });
    const links = run.getByTestId('lab-link-mtus');
    await expect(links.locator('tr[data-where="netns"][data-link="eth0"]')).toContainText('MTU 1500');
    await expect(links.locator('tr[data-where="netns"][data-link="eth0"]')).toContainText("the run's interface");
    // the lab's host links come from a before/after diff of the host, which also sees a veth another Playwright
    // worker made meanwhile: the run's own host link is the one port of this spec's bridge
    await expect(links.locator('tr[data-where="host"]', { hasText: `port of ${bridge}` })).toHaveCount(1);
    await expect(run.getByTestId('lab-mtu-warning')).toContainText(`more than host bridge ${bridge} on its path (MTU 1400)`);
    await expect(run.getByText('MTU warning', { exact: true })).toBeVisible();
    await run.getByTestId('lab-links-mtu').scrollIntoViewIfNeeded();
    await app.screenshot('mtu-03-lab-links');
    await run.getByTestId('lab-mtu-warning').scrollIntoViewIfNeeded();
    await app.screenshot('mtu-04-lab-warning');
  } finally {
    try {
      ip('link', 'del', bridge);
    } catch {
      // already gone
    }
    rmSync(ipamDir, { recursive: true, force: true });
  }
});
