/**
 * Reachability of a pod on two networks, in the app: eth0 on a bridge with portmap, eth1 on macvlan (mode bridge)
 * over a veth parent this spec creates, whose other end sits in a netns of its own. Probe shows one group per
 * network; on eth1 the path to the parent's own address is "isolated by design" (its own pill, neither green nor red)
 * with macvlan's rule, and the peer on eth1 is reachable. This spec runs its own engine (max two networks) and
 * browser host beside the shared one, and removes the pods, the parent link, its netns and the bridge afterwards.
 */
import { test as base, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleAppCore } from '../../electron/core/app-core';
import { createEngine } from '../../electron/engine/index';
import type { Engine } from '../../electron/engine/service/engine-api';
import { startBrowserHost, type BrowserHost } from '../../electron/host/browser-host';
import { restoreHost, snapshotHost } from '../../testkit/host-cleanup';
import { AppPage } from '../pages/app-page';
import { e2ePort } from '../support/sandbox-env';
import { gotoApp } from '../support/navigate';

const BRIDGE = process.env.PODSCOPE_E2E_MN_BRIDGE ?? 'psmn-e2e';
const PARENT = 'pmnpar-e2e';
const WIRE = 'pmnsw-e2e';
const WIRE_NS = 'pmn-wire-e2e';
const N = Number(process.env.PODSCOPE_E2E_MN_SUBNET ?? '73');
const PARENT_IP = `10.${N + 1}.0.1`;

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const quiet = (file: string, args: string[]) => {
  try {
    sh(file, args);
  } catch {
    /* absent */
  }
};

let root: string;
let engine: Engine | undefined;
let host: BrowserHost | undefined;
const hostBefore = snapshotHost();

base.beforeAll(async () => {
  quiet('ip', ['link', 'del', PARENT]);
  quiet('ip', ['netns', 'del', WIRE_NS]);
  sh('ip', ['netns', 'add', WIRE_NS]);
  sh('ip', ['link', 'add', PARENT, 'type', 'veth', 'peer', 'name', WIRE]);
  sh('ip', ['link', 'set', WIRE, 'netns', WIRE_NS]);
  sh('ip', ['-n', WIRE_NS, 'link', 'set', WIRE, 'up']);
  sh('ip', ['addr', 'add', `${PARENT_IP}/24`, 'dev', PARENT]);
  sh('ip', ['link', 'set', PARENT, 'up']);
  root = await mkdtemp(join(tmpdir(), 'pmn-e2e-'));
  const conf = join(root, 'net.d');
  for (const d of [conf, join(root, 'ipam'), join(root, 'ipam-mac')]) await mkdir(d, { recursive: true });
  const bridge = {
    cniVersion: '1.0.0',
    name: BRIDGE,
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        isGateway: true,
        ipMasq: false,
        ipam: {
          type: 'host-local',
          dataDir: join(root, 'ipam'),
          ranges: [[{ subnet: `10.${N}.0.0/24` }]],
          routes: [{ dst: `10.${N}.0.0/16` }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  const macvlan = {
    cniVersion: '1.0.0',
    name: `${BRIDGE}-mac`,
    plugins: [
      {
        type: 'macvlan',
        master: PARENT,
        mode: 'bridge',
        ipam: {
          type: 'host-local',
          dataDir: join(root, 'ipam-mac'),
          ranges: [[{ subnet: `10.${N + 1}.0.0/24`, rangeStart: `10.${N + 1}.0.10`, rangeEnd: `10.${N + 1}.0.50`, gateway: PARENT_IP }]],
        },
      },
    ],
  };
  await writeFile(join(conf, '10-bridge.conflist'), JSON.stringify(bridge));
  await writeFile(join(conf, '20-macvlan.conflist'), JSON.stringify(macvlan));
  engine = await createEngine({
    stateDir: join(root, 'state'),
    runDir: join(root, 'run'),
    netnsDir: join(root, 'netns'),
    cniConfDir: conf,
    cniCacheDir: join(root, 'cni-cache'),
    cniBinDirs: ['/usr/lib/cni'],
    maxConfNum: 2,
    probeOnReady: false,
  });
  host = await startBrowserHost({ core: assembleAppCore(engine) });
});

base.afterAll(async () => {
  try {
    await host?.close();
    if (engine) {
      for (const s of await engine.list().catch(() => [])) {
        await engine.stop(s.id).catch(() => undefined);
        await engine.remove(s.id).catch(() => undefined);
      }
      await engine.close();
    }
    restoreHost(hostBefore, [BRIDGE]);
    const mounts = execFileSync('cat', ['/proc/self/mounts'], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => root && (m === root || m.startsWith(`${root}/`)));
    for (const m of mounts.sort((a, b) => b.length - a.length)) quiet('umount', ['-l', m]);
    if (root) await rm(root, { recursive: true, force: true });
  } finally {
    quiet('ip', ['link', 'del', PARENT]);
    quiet('ip', ['netns', 'del', WIRE_NS]);
  }
});

base(
  'probe: a pod on a bridge and a macvlan network, paths grouped by network, the parent path isolated by design',
  async ({ page }, testInfo) => {
    const { id: a } = await engine!.run({
      config: {
        metadata: { name: 'multinet-a', namespace: 'e2e', uid: 'u-mn-a' },
        port_mappings: [{ container_port: 80, host_port: e2ePort(9) }],
      },
    });
    await engine!.run({ config: { metadata: { name: 'multinet-b', namespace: 'e2e', uid: 'u-mn-b' } } });
    await gotoApp(page, host!.url);
    const app = new AppPage(page, testInfo);
    await app.pods.open('multinet-a');
    await app.detail.tab('Reachability');
    await page.getByTestId('probe-button').click();
    const reach = page.getByTestId('reachability');
    const groups = reach.getByTestId('reach-network');
    await expect(groups).toHaveCount(2);
    await expect(groups.nth(0)).toHaveAttribute('data-interface', 'eth0');
    await expect(groups.nth(1)).toHaveAttribute('data-interface', 'eth1');
    await expect(groups.nth(1).getByTestId('reach-network-heading')).toContainText(`macvlan · parent ${PARENT}`);
    const isolated = groups.nth(1).locator('tr[data-kind="gateway"]');
    await expect(isolated).toHaveAttribute('data-verdict', 'isolated');
    await expect(isolated.locator('.pill')).toHaveClass(/pill-info/);
    await expect(isolated.getByTestId('reach-design-rule')).toContainText("a macvlan child cannot reach its parent link's own addresses");
    await expect(groups.nth(1).locator('tr[data-kind="peer"]').first()).toHaveAttribute('data-verdict', 'reachable');
    await expect(reach.locator('tr[data-kind="peer"][data-interface="eth1"] [data-testid="reach-answered-by"]').first()).toBeVisible();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    await groups.nth(1).locator('tr[data-kind="peer"]').last().scrollIntoViewIfNeeded();
    await app.screenshot('probe-05-two-networks-grouped');
  },
);
