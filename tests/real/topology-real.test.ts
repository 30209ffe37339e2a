/**
 * `podscope topology ID -o json` on the real host with Debian's reference plugins, one pod per shape: bridge +
 * bandwidth (bridge port, host stack, ifb redirect), ptp (the host's /32 route), macvlan on a veth parent the test
 * makes, host-device (a veth end the test makes, moved in and back), and a pod on two networks (ptp + bandwidth as
 * eth0, macvlan as eth1). Each picture is checked against `ip`/`tc` run here, then the pod is removed and what the
 * plugins made is checked gone. Needs root. Bridge and subnets from the test kit's allocator (a lease), links ptpt-*; all removed
 * in afterAll.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { PodTopologySchema, type PodTopology, type TopologyNode } from '../../shared/domain/topology';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { escapeRe } from '../../testkit/until';
import { podscope } from './helpers/podscope-cli';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' });
const linkExists = (name: string) => {
  try {
    execFileSync('ip', ['link', 'show', 'dev', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
/** the veth pairs this file makes on the host (deleting one end deletes both) */
const MACVLAN_PARENT = 'ptpt-pa';
const MACVLAN_PARENT_PEER = 'ptpt-pb';
const MOVED = 'ptpt-ha';
const MOVED_PEER = 'ptpt-hb';

let env: RealEnv;
let engine: SandboxEngine | undefined;

beforeAll(async () => {
  env = await createRealEnv({ tag: 'ptp' });
  for (const [a, b] of [
    [MACVLAN_PARENT, MACVLAN_PARENT_PEER],
    [MOVED, MOVED_PEER],
  ] as const) {
    if (linkExists(a)) sh('ip', ['link', 'del', a]);
    sh('ip', ['link', 'add', a, 'type', 'veth', 'peer', 'name', b]);
    sh('ip', ['link', 'set', a, 'up']);
    sh('ip', ['link', 'set', b, 'up']);
  }
});

afterAll(async () => {
  await engine?.close();
  await env?.teardown();
  for (const name of [MACVLAN_PARENT, MOVED_PEER]) if (linkExists(name)) sh('ip', ['link', 'del', name]);
});

/** host-local's store for this file's own networks (the env's leak checker looks after the bridge network's) */
const extraIpamDir = () => join(env.dir, 'ipam-extra');
const ipam = (subnet: string) => ({ type: 'host-local', dataDir: extraIpamDir(), ranges: [[{ subnet }]] });
/** addresses host-local still holds for a network: one file per address beside its lock and last_reserved_ip */
const reserved = (network: string) => {
  const dir = join(extraIpamDir(), network);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f !== 'lock' && !f.startsWith('last_reserved_ip')) : [];
};

/** An engine over a conf dir of these conflists (the env's own for the bridge pod), the one before it closed first. */
async function engineFor(name: string, lists: object[]): Promise<{ engine: SandboxEngine; flags: string[] }> {
  await engine?.close();
  let confDir = env.options.cniConfDir!;
  if (lists.length > 0) {
    confDir = join(env.dir, `net.d-${name}`);
    await mkdir(confDir, { recursive: true });
    for (const [i, l] of lists.entries()) await writeFile(join(confDir, `${10 + i}-${name}.conflist`), JSON.stringify(l));
  }
  const maxConfNum = Math.max(1, lists.length);
  engine = await env.engine({ cniConfDir: confDir, maxConfNum });
  const o = env.options;
  const flags = ['--state-dir', o.stateDir!, '--run-dir', o.runDir!, '--cni-conf-dir', confDir, '--cni-bin-dir', '/usr/lib/cni'];
  return { engine, flags: [...flags, '--cni-cache-dir', o.cniCacheDir!, '--max-conf-num', String(maxConfNum)] };
}

async function runPod(e: SandboxEngine, name: string, annotations: Record<string, string> = {}) {
  const { id } = await e.run({ config: { metadata: { name, namespace: 'podscope-ptp', uid: `uid-${name}` }, annotations } });
  const st = await e.status(id);
  expect(st.state).toBe('SANDBOX_READY');
  return { id, netnsPath: st.netnsPath! };
}

async function cliTopology(id: string, flags: string[]): Promise<PodTopology> {
  const r = await podscope('topology', id, '-o', 'json', ...flags);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const t = PodTopologySchema.parse(JSON.parse(r.stdout));
  expect(t.id).toBe(id);
  expect(Date.now() - Date.parse(t.readAt)).toBeLessThan(60_000);
  expect(t.errors).toEqual([]);
  return t;
}

const node = (t: PodTopology, id: string): TopologyNode => {
  const n = t.nodes.find((x) => x.id === id);
  if (!n) throw new Error(`no node ${id} in ${t.nodes.map((x) => x.id).join(', ')}`);
  return n;
};
/** the host end of the pod link's veth, as the topology found it */
const hostPeer = (t: PodTopology, podLink: string) => t.edges.find((e) => e.from === podLink && e.kind === 'veth')!.to;
/** the pod link's ifindex and its peer's, as `ip` prints them inside the netns */
const inside = (netnsPath: string, dev: string) =>
  (JSON.parse(sh('ip', ['-n', basename(netnsPath), '-j', 'link', 'show', dev])) as Array<{ ifindex: number; link_index?: number }>)[0]!;

describe('podscope topology -o json, one pod per plugin shape', () => {
  it('bridge + bandwidth: eth0 → its veth (ifindex both ways) → the bridge → host; the ifb the veth redirects to; owners bridge and bandwidth', async () => {
    const { engine: e, flags } = await engineFor('bridge', []);
    const { id, netnsPath } = await runPod(e, 'br', {
      'kubernetes.io/ingress-bandwidth': '10M',
      'kubernetes.io/egress-bandwidth': '10M',
    });
    const t = await cliTopology(id, flags);
    const bridge = { plugin: 'bridge', network: env.network, index: 0 };
    const eth0 = `pod:${id}:eth0`;
    const veth = hostPeer(t, eth0);
    expect(node(t, veth).ifindex).toBe(inside(netnsPath, 'eth0').link_index);
    expect(t.edges).toEqual(
      expect.arrayContaining([
        { from: eth0, to: veth, kind: 'veth', owner: bridge },
        { from: veth, to: `host:${env.bridge}`, kind: 'bridge-port', owner: bridge },
        { from: `host:${env.bridge}`, to: 'host', kind: 'host-stack', owner: bridge },
      ]),
    );
    const redirect = t.edges.find((x) => x.kind === 'redirect')!;
    expect(redirect).toMatchObject({ from: veth, owner: { plugin: 'bandwidth', network: env.network, index: 2 } });
    const ifb = node(t, redirect.to).name;
    expect(node(t, redirect.to).kind).toBe('ifb');
    expect(sh('tc', ['filter', 'show', 'dev', veth.slice('host:'.length), 'ingress'])).toContain(`Redirect to device ${ifb}`);
    await e.remove(id);
    expect(linkExists(veth.slice('host:'.length))).toBe(false);
    expect(linkExists(ifb)).toBe(false);
  }, 60_000);

  it("ptp: eth0 → its veth, and the host's /32 route to the pod address through that veth, owned by ptp", async () => {
    const { engine: e, flags } = await engineFor('ptp', [
      { cniVersion: '1.0.0', name: 'ptpt-ptp', plugins: [{ type: 'ptp', ipam: ipam(env.lease!.subnet4(1)) }] },
    ]);
    const { id } = await runPod(e, 'ptp');
    const t = await cliTopology(id, flags);
    const ptp = { plugin: 'ptp', network: 'ptpt-ptp', index: 0 };
    const eth0 = `pod:${id}:eth0`;
    const veth = hostPeer(t, eth0);
    const dev = veth.slice('host:'.length);
    const podIp = node(t, eth0).addresses.find((a) => a.family === 4)!.address;
    expect(podIp).toMatch(new RegExp(String.raw`^${escapeRe(subnetTextPrefix(env.lease!.subnet4(1)))}`));
    expect(t.edges).toContainEqual({ from: eth0, to: veth, kind: 'veth', owner: ptp });
    expect(t.edges).toContainEqual({ from: veth, to: 'host', kind: 'route', detail: `${podIp} dev ${dev}`, owner: ptp });
    expect(sh('ip', ['-4', 'route', 'show', 'dev', dev])).toContain(podIp);
    expect(t.nodes.some((n) => n.kind === 'bridge')).toBe(false);
    await e.remove(id);
    expect(linkExists(dev)).toBe(false);
    expect(sh('ip', ['-4', 'route', 'show'])).not.toContain(`${podIp} dev`);
    expect(reserved('ptpt-ptp')).toEqual([]);
  }, 60_000);

  it(`macvlan on ${MACVLAN_PARENT}: eth0 → its parent (by ifindex) → the parent's own veth peer; owner macvlan`, async () => {
    const { engine: e, flags } = await engineFor('macvlan', [
      {
        cniVersion: '1.0.0',
        name: 'ptpt-mv',
        plugins: [{ type: 'macvlan', master: MACVLAN_PARENT, mode: 'bridge', ipam: ipam(env.lease!.subnet4(2)) }],
      },
    ]);
    const { id, netnsPath } = await runPod(e, 'mv');
    const t = await cliTopology(id, flags);
    const eth0 = `pod:${id}:eth0`;
    expect(node(t, eth0)).toMatchObject({ kind: 'pod-if', linkKind: 'macvlan', mode: 'bridge' });
    expect(t.edges).toContainEqual({
      from: eth0,
      to: `host:${MACVLAN_PARENT}`,
      kind: 'parent',
      detail: 'macvlan bridge',
      owner: { plugin: 'macvlan', network: 'ptpt-mv', index: 0 },
    });
    expect(node(t, `host:${MACVLAN_PARENT}`).ifindex).toBe(inside(netnsPath, 'eth0').link_index);
    expect(t.edges).toContainEqual({ from: `host:${MACVLAN_PARENT}`, to: `host:${MACVLAN_PARENT_PEER}`, kind: 'veth' });
    await e.remove(id);
    expect(linkExists(MACVLAN_PARENT)).toBe(true);
    expect(reserved('ptpt-mv')).toEqual([]);
  }, 60_000);

  it(`host-device: ${MOVED} moved in as eth0, named by the kernel's alias, its old peer still on the host; back on the host after remove`, async () => {
    const { engine: e, flags } = await engineFor('hostdev', [
      { cniVersion: '1.0.0', name: 'ptpt-hd', plugins: [{ type: 'host-device', device: MOVED, ipam: ipam(env.lease!.subnet4(3)) }] },
    ]);
    const { id } = await runPod(e, 'hd');
    expect(linkExists(MOVED)).toBe(false);
    const t = await cliTopology(id, flags);
    const eth0 = `pod:${id}:eth0`;
    expect(node(t, eth0)).toMatchObject({
      kind: 'host-device',
      originalName: MOVED,
      owner: { plugin: 'host-device', network: 'ptpt-hd', index: 0 },
    });
    expect(t.edges).toContainEqual({ from: eth0, to: `host:${MOVED_PEER}`, kind: 'veth' });
    await e.remove(id);
    expect(linkExists(MOVED)).toBe(true);
    expect(reserved('ptpt-hd')).toEqual([]);
  }, 60_000);

  it('two networks: eth0 (ptp + bandwidth: veth, route, ifb redirect) and eth1 (macvlan: parent), each edge with its own network', async () => {
    const { engine: e, flags } = await engineFor('two', [
      {
        cniVersion: '1.0.0',
        name: 'ptpt-a',
        plugins: [
          { type: 'ptp', ipam: ipam(env.lease!.subnet4(4)) },
          { type: 'bandwidth', capabilities: { bandwidth: true } },
        ],
      },
      {
        cniVersion: '1.0.0',
        name: 'ptpt-b',
        plugins: [{ type: 'macvlan', master: MACVLAN_PARENT, mode: 'bridge', ipam: ipam(env.lease!.subnet4(5)) }],
      },
    ]);
    const { id } = await runPod(e, 'two', { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' });
    const t = await cliTopology(id, flags);
    const eth0 = `pod:${id}:eth0`;
    const eth1 = `pod:${id}:eth1`;
    const veth = hostPeer(t, eth0);
    const ptp = { plugin: 'ptp', network: 'ptpt-a', index: 0 };
    expect(t.edges).toContainEqual({ from: eth0, to: veth, kind: 'veth', owner: ptp });
    expect(t.edges.find((x) => x.kind === 'route')).toMatchObject({ from: veth, to: 'host', owner: ptp });
    expect(t.edges.find((x) => x.kind === 'redirect')).toMatchObject({
      from: veth,
      owner: { plugin: 'bandwidth', network: 'ptpt-a', index: 1 },
    });
    expect(t.edges).toContainEqual({
      from: eth1,
      to: `host:${MACVLAN_PARENT}`,
      kind: 'parent',
      detail: 'macvlan bridge',
      owner: { plugin: 'macvlan', network: 'ptpt-b', index: 0 },
    });
    expect(node(t, eth1).addresses.some((a) => a.address.startsWith(subnetTextPrefix(env.lease!.subnet4(5))))).toBe(true);
    // the text form names the same edges
    const text = await podscope('topology', id, ...flags);
    expect(text.stdout).toContain(`─parent macvlan bridge→ host ${MACVLAN_PARENT} (veth)`);
    expect(text.stdout).toMatch(
      new RegExp(`─route ${escapeRe(subnetTextPrefix(env.lease!.subnet4(4)))}\\d+ dev veth\\w+→ host stack {2}\\[ptp/ptpt-a\\]`),
    );
    await e.remove(id);
    expect(linkExists(veth.slice('host:'.length))).toBe(false);
    expect(linkExists(node(t, t.edges.find((x) => x.kind === 'redirect')!.to).name)).toBe(false);
    expect([...reserved('ptpt-a'), ...reserved('ptpt-b')]).toEqual([]);
  }, 60_000);
});
