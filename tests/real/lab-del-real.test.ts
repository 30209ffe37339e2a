/**
 * The lab's DEL after a failed ADD, with Debian's real plugins: the whole list in reverse as libcni (and so
 * containerd) does, the plugins after the failure DELed for an ADD they never saw and how each behaved, Podscope's
 * own engine named apart, and nothing left. Root only. Resources: bridge, subnet and host port from the test kit's
 * allocator (a lease), dirs under /tmp/plk-lab-*.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { escapeRe } from '../../testkit/until';
import { createEngine } from '../../electron/engine/index';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { LabApi } from '../../shared/domain/lab';
import { findLeftovers, formatLeftovers } from '../../testkit/leak-check';
import { labDirs } from './helpers/lab-dirs';
import { leaseHost } from '../../testkit/allocator';

// every host resource of this file is a lease of the test kit's allocator: files run in parallel
const lease = leaseHost('lab-del');
afterAll(() => lease.release());
const BRIDGE = lease.name('-lab');
const NETWORK = lease.name('-net');
const SUBNET = lease.subnet4(9);
const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge');

describe.skipIf(!canRun)('lab DEL after a failed ADD', () => {
  let engine: SandboxEngine;
  let lab: LabApi;
  const dirs = labDirs({ bridge: BRIDGE, subnet: SUBNET, network: NETWORK });
  const bin = () => join(dirs.dir, 'bin');

  function conflist(middle: object): string {
    return JSON.stringify({
      cniVersion: '1.0.0',
      name: NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: true,
          ipam: { type: 'host-local', dataDir: join(dirs.dir, 'ipam'), ranges: [[{ subnet: SUBNET }]] },
        },
        { type: 'firewall' },
        middle,
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'bandwidth', capabilities: { bandwidth: true } },
        { type: 'tuning', sysctl: { 'net.ipv4.conf.eth0.rp_filter': '2' } },
      ],
    });
  }
  const capabilities = {
    portMappings: [{ hostPort: lease.port(0), containerPort: 80, protocol: 'tcp' as const }],
    bandwidth: { ingressRate: 10_000_000, ingressBurst: 1_000_000, egressRate: 10_000_000, egressBurst: 1_000_000 },
  };

  beforeAll(async () => {
    await dirs.create('/tmp/plk-lab-');
    mkdirSync(bin());
    // fails every ADD, succeeds every DEL
    writeFileSync(
      join(bin(), 'plk-fail'),
      '#!/bin/sh\ncat >/dev/null\n[ "$CNI_COMMAND" = ADD ] && { echo \'{"cniVersion":"1.0.0","code":999,"msg":"planted failure"}\'; exit 1; }\nexit 0\n',
    );
    chmodSync(join(bin(), 'plk-fail'), 0o755);
    engine = await createEngine({ ...dirs.options(), cniBinDirs: [bin(), '/usr/lib/cni'] });
    lab = engine.lab!;
  }, 30_000);

  afterEach(() => dirs.dropBridge());

  afterAll(async () => {
    await engine?.close();
    await dirs.destroy();
  }, 30_000);

  it('a plugin failing in the middle: every plugin is DELed in reverse, the three after it for an ADD they never saw, each with how it behaved', async () => {
    const run = await lab.run({ text: conflist({ type: 'plk-fail' }), capabilities });
    expect(run.plugins.map((p) => `${p.verb} ${p.type} ${p.ok ? 'ok' : 'failed'}`)).toEqual([
      'ADD bridge ok',
      'ADD firewall ok',
      'ADD plk-fail failed',
      'DEL tuning ok',
      'DEL bandwidth ok',
      'DEL portmap ok',
      'DEL plk-fail ok',
      'DEL firewall ok',
      'DEL bridge ok',
    ]);
    expect(run.delAfterFailedAdd).toEqual({
      failedIndex: 2,
      failedType: 'plk-fail',
      neverAdded: [
        { index: 5, type: 'tuning', ok: true },
        { index: 4, type: 'bandwidth', ok: true },
        { index: 3, type: 'portmap', ok: true },
      ],
      engine: expect.stringMatching(/^Podscope's engine DELs only the plugins its failed ADD executed/),
    });
    // firewall's DEL had the chain's result (bridge's), so its CNI-FORWARD rules went
    const fwDel = run.plugins.find((p) => p.verb === 'DEL' && p.type === 'firewall')!;
    expect(JSON.parse(fwDel.stdin).prevResult.ips[0].address).toMatch(new RegExp(String.raw`^${escapeRe(subnetTextPrefix(SUBNET))}`));
    expect(run.kernelCreated.some((i) => i.kind === 'iptables' && i.what.includes('CNI-FORWARD'))).toBe(true);
    expect(run.delOk).toBe(true);
    expect(run.leftAfterDel).toEqual([]);
    expect(formatLeftovers(findLeftovers({ ...dirs.scope(), ids: [run.containerId] }))).toBe('');
  }, 60_000);

  it('a plugin with no binary: its DEL fails too (reported, not judged as a leak), the others are still DELed', async () => {
    const run = await lab.run({ text: conflist({ type: 'plk-no-such-plugin' }), capabilities });
    expect(run.delAfterFailedAdd?.neverAdded).toEqual([
      { index: 5, type: 'tuning', ok: true },
      { index: 4, type: 'bandwidth', ok: true },
      { index: 3, type: 'portmap', ok: true },
      { index: 2, type: 'plk-no-such-plugin', ok: false, error: expect.stringMatching(/failed to find plugin "plk-no-such-plugin"/) },
    ]);
    expect(run.plugins.filter((p) => p.verb === 'DEL').map((p) => `${p.type} ${p.ok ? 'ok' : 'failed'}`)).toEqual([
      'tuning ok',
      'bandwidth ok',
      'portmap ok',
      'plk-no-such-plugin failed',
      'firewall ok',
      'bridge ok',
    ]);
    expect(run.delOk).toBe(true);
    expect(run.leftAfterDel).toEqual([]);
    expect(formatLeftovers(findLeftovers({ ...dirs.scope(), ids: [run.containerId] }))).toBe('');
  }, 60_000);
});
