/**
 * The lab's kernel state beyond links, addresses and rules, with Debian's real plugins (root only): tuning's sysctls,
 * MAC and MTU on a bridge pod; sbr's policy rule and its table; host-device moving a host link (one end of a veth
 * pair this file creates: this kernel has no dummy links) into the run's netns and back. Then a pod with
 * bridge+firewall+tuning+sbr, and what `podscope inspectp` reads from the kernel of each plugin's effect. Bridges and
 * subnets are leases of the test kit's allocator (one for the lab runs, one for the pod), veths
 * pls-hd0/pls-hd1, dirs under /tmp/podscope-ls-* and /tmp/podscope-pls-*.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { escapeRe } from '../../testkit/until';
import { createEngine } from '../../electron/engine/index';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { afterDelReport, type LabApi, type LabRun } from '../../shared/domain/lab';
import { findLeftovers, formatLeftovers } from '../../testkit/leak-check';
import { labDirs } from './helpers/lab-dirs';
import { podscope } from './helpers/podscope-cli';
import { engineFlagsFor } from '../../testkit/engine-flags';
import { leaseHost } from '../../testkit/allocator';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import type { LivePluginEffect } from '../../shared/domain/live';

// every host resource of this file is a lease of the test kit's allocator: files run in parallel
const lease = leaseHost('lab-state');
afterAll(() => lease.release());
const BRIDGE = lease.name('-lab');
const NETWORK = lease.name('-net');
const HOST_LINK = 'pls-hd0';
const HOST_PEER = 'pls-hd1';
const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/tuning') && existsSync('/usr/lib/cni/sbr');

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });
const quietly = (f: () => unknown) => {
  try {
    f();
  } catch {
    // already gone
  }
};

function bridgeList(dir: string, subnet: string, more: Array<Record<string, unknown>>): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: NETWORK,
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        isGateway: true,
        ipMasq: false,
        ipam: { type: 'host-local', dataDir: join(dir, 'ipam'), ranges: [[{ subnet }]] },
      },
      ...more,
    ],
  });
}

const lines = (run: LabRun, kind: string) => run.kernelCreated.filter((i) => i.kind === kind).map((i) => i.what);
const texts = (changes: LabRun['changedByAdd']) => (changes ?? []).map((c) => c.text);

describe.skipIf(!canRun)('lab kernel state: sysctls, policy rules and tables, moved host links', () => {
  let engine: SandboxEngine;
  let lab: LabApi;
  const dirs = labDirs({ bridge: BRIDGE, subnet: lease.range4, network: NETWORK });

  beforeAll(async () => {
    await dirs.create('/tmp/podscope-ls-');
    engine = await createEngine(dirs.options(), {});
    lab = engine.lab!;
  });

  // the bridge plugin keeps its bridge (with its gateway address): the next test's subnet needs a fresh one
  afterEach(() => dirs.dropBridge());

  afterAll(async () => {
    quietly(() => ip('link', 'del', HOST_LINK));
    await engine?.close();
    await dirs.destroy();
  });

  it("tuning on a bridge: its sysctls read in the run's netns (before: the netns's default), its MAC and MTU on eth0", async () => {
    const run = await lab.run({
      text: bridgeList(dirs.dir, lease.subnet4(0), [
        {
          type: 'tuning',
          mac: '0a:58:0a:50:00:99',
          mtu: 1400,
          sysctl: { 'net.ipv4.conf.eth0.proxy_arp': '1', 'net.ipv4.conf.eth0.arp_ignore': '2' },
        },
      ]),
    });
    console.log(`tuning run ${run.id}: changedByAdd\n  ${texts(run.changedByAdd).join('\n  ')}\nafter DEL:`, afterDelReport(run));
    expect(run.addOk).toBe(true);
    expect(lines(run, 'netns-link')).toContainEqual(expect.stringMatching(/^eth0 veth mtu 1400 mac 0a:58:0a:50:00:99$/));
    const proxyArp = run.changedByAdd!.find((c) => c.subject === 'net.ipv4.conf.eth0.proxy_arp')!;
    expect(proxyArp).toMatchObject({
      where: 'netns',
      kind: 'sysctl',
      before: '0',
      beforeFrom: 'net.ipv4.conf.default.proxy_arp',
      after: '1',
      owner: 'tuning',
    });
    expect(run.changedByAdd!.find((c) => c.subject === 'net.ipv4.conf.eth0.arp_ignore')).toMatchObject({ after: '2', owner: 'tuning' });
    // DEL removed eth0: nothing of tuning's is left, and nothing on the host changed
    expect(run.leftAfterDel).toEqual([]);
    expect(run.changedAfterDel!.filter((c) => c.where === 'host' && !c.why)).toEqual([]);
    expect(run.success).toBe(true);
  });

  it("sbr: the policy rule for the pod's address and the routes of its table, created by ADD", async () => {
    // bridge's CHECK looks for the gateway in the main table, where sbr moved it from: CHECK is not what this shows
    const run = await lab.run({ text: bridgeList(dirs.dir, lease.subnet4(1), [{ type: 'sbr' }]), skipCheck: true });
    expect(run.error).toBeUndefined();
    console.log(
      `sbr run ${run.id}:`,
      run.kernelCreated.filter((i) => /rule|route/.test(i.kind)),
      afterDelReport(run),
    );
    expect(run.addOk).toBe(true);
    const podIp = run.result!.ips![0]!.address.split('/')[0]!;
    const rule = lines(run, 'netns-rule').find((l) => l.includes(`from ${podIp} lookup`));
    expect(rule).toBeDefined();
    const table = / lookup (\d+)$/.exec(rule!)![1]!;
    expect(lines(run, 'netns-route')).toContainEqual(
      expect.stringMatching(
        new RegExp(`^ipv4 default via ${escapeRe(lease.subnet4(1).replace(/0\/24$/, '1'))} dev eth0 .*table ${table}$`),
      ),
    );
    // whatever DEL leaves in the netns is reported as created and left
    for (const i of run.leftAfterDel) expect(afterDelReport(run).map((r) => r.text)).toContainEqual(expect.stringContaining(i.what));
  });

  it('host-device on a veth end: moved into the netns by ADD, back after DEL with the state it came back in, before → after', async () => {
    quietly(() => ip('link', 'del', HOST_LINK));
    ip('link', 'add', HOST_LINK, 'type', 'veth', 'peer', 'name', HOST_PEER);
    ip('link', 'set', HOST_PEER, 'up');
    ip('link', 'set', HOST_LINK, 'up');
    execFileSync('sysctl', ['-q', '-w', `net.ipv4.conf.${HOST_LINK}.proxy_arp=1`]);
    try {
      const run = await lab.run({
        text: JSON.stringify({
          cniVersion: '1.0.0',
          name: NETWORK,
          plugins: [
            {
              type: 'host-device',
              device: HOST_LINK,
              ipam: { type: 'static', addresses: [{ address: lease.subnet4(2).replace(/0\/24$/, '5/24') }] },
            },
          ],
        }),
      });
      console.log(
        `host-device run ${run.id}: changedByAdd\n  ${texts(run.changedByAdd).join('\n  ')}\nafter DEL\n  ${afterDelReport(run)
          .map((r) => r.text)
          .join('\n  ')}`,
      );
      expect(run.addOk).toBe(true);
      expect(run.changedByAdd).toContainEqual(
        expect.objectContaining({ where: 'host', kind: 'link', subject: HOST_LINK, field: 'netns', owner: 'host-device' }),
      );
      expect(texts(run.changedByAdd)).toContain(`host link ${HOST_LINK}: moved into the run's netns as eth0`);
      // what the kernel says now about the link that came back
      const now = JSON.parse(ip('-j', 'link', 'show', HOST_LINK)) as Array<{ operstate: string; flags: string[] }>;
      const stateNow = now[0]!.operstate;
      const stateChange = run.changedAfterDel!.find((c) => c.subject === HOST_LINK && c.field === 'state');
      if (stateNow === 'UP') expect(stateChange).toBeUndefined();
      else expect(stateChange).toMatchObject({ before: 'UP', after: stateNow, text: `host link ${HOST_LINK}: state UP → ${stateNow}` });
      const proxyArpNow = execFileSync('sysctl', ['-n', `net.ipv4.conf.${HOST_LINK}.proxy_arp`], { encoding: 'utf8' }).trim();
      const proxyArp = run.changedAfterDel!.find((c) => c.subject === `net.ipv4.conf.${HOST_LINK}.proxy_arp`);
      if (proxyArpNow === '1') expect(proxyArp).toBeUndefined();
      else expect(proxyArp).toMatchObject({ where: 'host', before: '1', after: proxyArpNow });
      // a host value DEL did not put back fails the run like a leak
      const hostChanged = run.changedAfterDel!.filter((c) => c.where === 'host' && !c.why);
      expect(run.success).toBe(hostChanged.length === 0 && run.leftAfterDel.length === 0 && run.delOk);
      expect(
        afterDelReport(run)
          .filter((r) => r.leak)
          .map((r) => r.text),
      ).toEqual(expect.arrayContaining(hostChanged.map((c) => c.text)));
    } finally {
      quietly(() => ip('link', 'del', HOST_LINK));
    }
    expect(formatLeftovers(findLeftovers(dirs.scope()))).toBe('');
  });
});

describe.skipIf(!canRun || !existsSync('/usr/lib/cni/firewall'))(
  "inspectp: each plugin's effect, read from the kernel, with its owner",
  () => {
    let env: RealEnv;
    let flags: string[];
    // the pod's bridge and network: its env's lease's name
    let POD_NET: string;

    beforeAll(async () => {
      env = await createRealEnv({ tag: 'pls', ipv4Only: true });
      POD_NET = env.bridge;
      flags = engineFlagsFor({ ...env.options, cniBinDirs: ['/usr/lib/cni'] });
      await writeFile(
        join(env.options.cniConfDir!, '10-podscope-test.conflist'),
        JSON.stringify({
          cniVersion: '1.0.0',
          name: POD_NET,
          plugins: [
            {
              type: 'bridge',
              bridge: POD_NET,
              isGateway: true,
              ipMasq: false,
              ipam: { type: 'host-local', dataDir: env.ipamDir, ranges: [[{ subnet: env.subnet4 }]] },
            },
            { type: 'firewall' },
            { type: 'tuning', mtu: 1450, sysctl: { 'net.ipv4.conf.eth0.proxy_arp': '1' } },
            { type: 'sbr' },
          ],
        }),
      );
    });

    afterAll(async () => {
      await env?.teardown();
    });

    it("firewall's CNI-FORWARD rules for the pod IP, tuning's sysctl and MTU, sbr's rule and table: each with plugin, network, interface", async () => {
      const file = join(env.dir, 'pod.json');
      await writeFile(file, JSON.stringify({ metadata: { name: 'pls-effects', namespace: 'default', uid: 'u-pls' } }));
      const runp = await podscope('runp', file, ...flags);
      expect(runp.stderr).toBe('');
      const id = runp.stdout.trim();
      try {
        const text = (await podscope('inspectp', id, ...flags)).stdout;
        console.log(text.slice(text.indexOf('Plugin effects')));
        const doc = JSON.parse((await podscope('inspectp', '-o', 'json', id, ...flags)).stdout) as {
          ip: string;
          pluginEffects: { collectedAt: string; effects: LivePluginEffect[] };
        };
        const ip = doc.ip;
        expect(ip).toMatch(new RegExp(String.raw`^${escapeRe(subnetTextPrefix(env.subnet4))}\d+$`));
        expect(Date.parse(doc.pluginEffects.collectedAt)).toBeGreaterThan(Date.now() - 60_000);
        const of = (plugin: string) => doc.pluginEffects.effects.filter((e) => e.plugin === plugin);
        for (const e of doc.pluginEffects.effects) expect(e).toMatchObject({ network: POD_NET, ifName: 'eth0' });
        // firewall: accept rules naming the pod's address, in its own chain, as the kernel has them
        expect(of('firewall').map((e) => e.what)).toContainEqual(
          expect.stringMatching(new RegExp(`^iptables filter -A CNI-FORWARD .*${ip.replace(/\./g, '\\.')}/32`)),
        );
        expect(of('firewall').every((e) => e.source === 'kernel' && e.matches === true)).toBe(true);
        // tuning: the value read inside the pod's netns, checked against the config
        expect(of('tuning')).toContainEqual(
          expect.objectContaining({ kind: 'sysctl', what: 'net.ipv4.conf.eth0.proxy_arp = 1', source: 'kernel', matches: true }),
        );
        expect(of('tuning')).toContainEqual(expect.objectContaining({ kind: 'link', what: 'eth0 mtu 1450', matches: true }));
        // sbr: the rule for the pod's address and its table's default route
        const rule = of('sbr').find((e) => e.kind === 'policy-rule')!;
        expect(rule.what).toMatch(new RegExp(`^ipv4 \\d+: from ${ip.replace(/\./g, '\\.')} lookup (\\d+)$`));
        const table = / lookup (\d+)$/.exec(rule.what)![1]!;
        expect(of('sbr')).toContainEqual(
          expect.objectContaining({ kind: 'route', what: `ipv4 default via ${env.gateway4} dev eth0 table ${table}` }),
        );
        // the text says the same, with the read time and the owner
        expect(text).toContain(`Plugin effects (kernel, read at `);
        expect(text).toContain(`ok  tuning (${POD_NET}/eth0) sysctl net.ipv4.conf.eth0.proxy_arp = 1 [kernel, as asked]`);
        expect(text).toMatch(new RegExp(`ok  firewall \\(${POD_NET}/eth0\\) iptables-rule iptables filter -A CNI-FORWARD`));
      } finally {
        await podscope('stopp', id, ...flags);
        await podscope('rmp', id, ...flags);
      }
      // firewall's DEL (with the cached result) took its rules away again
      const filter = execFileSync('iptables-save', ['-t', 'filter'], { encoding: 'utf8' });
      expect(filter).not.toMatch(new RegExp(String.raw`${escapeRe(subnetTextPrefix(env.subnet4))}\d+\/32`));
    });
  },
);
