/**
 * The CNI lab's before/after with the reference plugins the other lab files do not run (Debian's real plugins, root
 * only): ptp (its host veth and the host's /32 route to the pod), ptp + firewall (its CNI-FORWARD accept rules for the
 * pod's address) and macvlan on one end of a veth pair this file creates (this kernel has no dummy links): what ADD
 * created in the kernel, and that DEL put everything back. Named after this file: network plb-lab, subnets from
 * the test kit's allocator (a lease), veths plb-mv0/plb-mv1, dirs under /tmp/podscope-lb-*.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { afterDelReport, type LabApi, type LabRun } from '../../shared/domain/lab';
import { findLeftovers, formatLeftovers } from '../../testkit/leak-check';
import { labDirs } from './helpers/lab-dirs';
import { leaseHost } from '../../testkit/allocator';

// every host resource of this file is a lease of the test kit's allocator: files run in parallel
const lease = leaseHost('lab-plugins');
afterAll(() => lease.release());
const NETWORK = 'plb-lab';
const STATIC = lease.subnet4(2).replace(/0\/24$/, '5/24');
const PARENT = 'plb-mv0';
const PARENT_PEER = 'plb-mv1';
const canRun = process.getuid?.() === 0 && ['ptp', 'firewall', 'macvlan'].every((p) => existsSync(`/usr/lib/cni/${p}`));

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });
const quietly = (f: () => unknown) => {
  try {
    f();
  } catch {
    // already gone
  }
};
const created = (run: LabRun, kind: string) => run.kernelCreated.filter((i) => i.kind === kind).map((i) => i.what);
const podIp = (run: LabRun) => run.result!.ips![0]!.address.split('/')[0]!;

/** DEL put back everything ADD made: nothing created and left, no host value changed that is not kept on purpose */
function expectAllPutBack(run: LabRun): void {
  expect(run.delOk).toBe(true);
  expect(run.leftAfterDel).toEqual([]);
  expect(afterDelReport(run).filter((r) => r.leak)).toEqual([]);
  expect(run.success).toBe(true);
}

describe.skipIf(!canRun)('lab before/after: ptp, ptp + firewall, macvlan on a veth parent', () => {
  let engine: SandboxEngine;
  let lab: LabApi;
  const dirs = labDirs({ bridge: lease.name('-none'), subnet: lease.range4, network: NETWORK });
  const list = (plugins: object[]) => JSON.stringify({ cniVersion: '1.0.0', name: NETWORK, plugins });
  const hostLocal = (subnet: string) => ({ type: 'host-local', dataDir: join(dirs.dir, 'ipam'), ranges: [[{ subnet }]] });

  beforeAll(async () => {
    await dirs.create('/tmp/podscope-lb-');
    engine = await createEngine(dirs.options(), {});
    lab = engine.lab!;
    quietly(() => ip('link', 'del', PARENT));
    ip('link', 'add', PARENT, 'type', 'veth', 'peer', 'name', PARENT_PEER);
    ip('link', 'set', PARENT_PEER, 'up');
    ip('link', 'set', PARENT, 'up');
  });

  afterAll(async () => {
    quietly(() => ip('link', 'del', PARENT));
    await engine?.close();
    await dirs.destroy();
  });

  it("ptp: ADD makes a host veth and the host's /32 route to the pod; DEL removes both", async () => {
    const run = await lab.run({ text: list([{ type: 'ptp', ipMasq: false, ipam: hostLocal(lease.subnet4(0)) }]) });
    console.log(`ptp run ${run.id}: created`, run.kernelCreated, 'after DEL', afterDelReport(run));
    expect(run.addOk).toBe(true);
    expect(created(run, 'host-route')).toContainEqual(expect.stringContaining(podIp(run)));
    expect(created(run, 'link')).not.toEqual([]);
    expectAllPutBack(run);
  });

  it("ptp + firewall: ADD adds CNI-FORWARD accept rules for the pod's address; DEL, given the cached result, removes them", async () => {
    const run = await lab.run({ text: list([{ type: 'ptp', ipMasq: false, ipam: hostLocal(lease.subnet4(1)) }, { type: 'firewall' }]) });
    console.log(`ptp+firewall run ${run.id}: iptables created`, created(run, 'iptables'), 'after DEL', afterDelReport(run));
    expect(run.addOk).toBe(true);
    const rules = created(run, 'iptables').filter((r) => r.includes('CNI-FORWARD') && r.includes(`${podIp(run)}/32`));
    expect(rules.length).toBeGreaterThanOrEqual(2);
    expectAllPutBack(run);
  });

  it('macvlan on a veth parent: ADD makes a macvlan eth0 in the netns and touches nothing on the host; DEL leaves nothing', async () => {
    const run = await lab.run({
      text: list([{ type: 'macvlan', master: PARENT, mode: 'bridge', ipam: { type: 'static', addresses: [{ address: STATIC }] } }]),
    });
    console.log(`macvlan run ${run.id}: created`, run.kernelCreated, 'changed by ADD', run.changedByAdd);
    expect(run.addOk).toBe(true);
    expect(created(run, 'netns-link')).toContainEqual(expect.stringMatching(/^eth0 macvlan/));
    expect(created(run, 'netns-address')).toContainEqual(expect.stringContaining(STATIC));
    expect((run.changedByAdd ?? []).filter((c) => c.where === 'host' && !c.why)).toEqual([]);
    expectAllPutBack(run);
    expect(formatLeftovers(findLeftovers(dirs.scope()))).toBe('');
  });
});
