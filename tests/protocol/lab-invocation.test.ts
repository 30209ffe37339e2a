/**
 * The CNI lab and the sandbox runtime invoke a network list the same way (one module, ../cni/network-ops.ts): over
 * the same fake plugin executables, a lab run and the runtime's manager send every plugin the same stdin for ADD,
 * CHECK and DEL (prevResult chaining, the cached result, capability filtering, the capability args builder), and
 * the lab gates CHECK as libcni does (version first, then disableCheck).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emptySnapshot } from '../../electron/engine/lab/kernel';
import { LabService } from '../../electron/engine/lab/service';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { buildCniOptions } from '../../electron/engine/pods/cni-options';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { PodSandboxConfigSchema } from '../../shared/domain/config';
import { FakeCniSandbox, type LoggedExec } from './fake-cni-sandbox';

const ID = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00';
const FIRST_RESULT = {
  cniVersion: '1.0.0',
  interfaces: [{ name: 'br0', mac: '02:00:00:00:00:01' }],
  ips: [{ address: '10.1.0.5/24', gateway: '10.1.0.1', interface: 0 }],
  routes: [{ dst: '0.0.0.0/0' }],
};

describe('the lab and the runtime invoke a list the same way', () => {
  let box: FakeCniSandbox;
  let stateDir: string;

  beforeEach(async () => {
    box = await FakeCniSandbox.create(['first', 'second']);
    stateDir = await mkdtemp(path.join(tmpdir(), 'psc-lab-proto-'));
  });
  afterEach(async () => {
    await box.dispose();
    await rm(stateDir, { recursive: true, force: true });
  });

  function lab(): LabService {
    return new LabService({
      options: {
        stateDir,
        netnsDir: path.join(stateDir, 'netns'),
        cniConfDir: box.confDir,
        cniBinDirs: [box.binDir],
        pluginTimeoutMs: 10_000,
      },
      runner: new NodeProcessRunner(),
      netns: new FakeNetnsManager(path.join(stateDir, 'netns')),
      kernel: { read: async () => ({ snapshot: emptySnapshot(), errors: [] }) },
      liveNetworks: async () => [],
      recordedAdd: async () => {
        throw new Error('none');
      },
    });
  }

  async function conflist(cniVersion: string, extra: Record<string, unknown> = {}): Promise<string> {
    const file = await box.writeConflist('10-net.conflist', 'labnet', cniVersion, [
      { type: 'first', capabilities: { portMappings: true, bandwidth: true, mac: true }, fake: { add: { result: FIRST_RESULT } } },
      { type: 'second', capabilities: { bandwidth: false }, fake: { add: { chain: { iface: 'veth1' } } } },
    ]);
    const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    return JSON.stringify({ ...doc, ...extra }, null, 2);
  }

  const stdinBy = (log: LoggedExec[]) => log.map((e) => `${e.verb} ${e.type} ${e.stdin}`);

  it('a lab run sends every plugin the stdin the runtime sends it for ADD, CHECK and DEL', async () => {
    await conflist('1.0.0');
    // the runtime: a pod with one port mapping and a 1M ingress bandwidth annotation
    const config = PodSandboxConfigSchema.parse({
      metadata: { name: 'web', namespace: 'default', uid: 'u1' },
      port_mappings: [{ container_port: 80, host_port: 8080 }],
      annotations: { 'kubernetes.io/ingress-bandwidth': '1M' },
    });
    const mgr = box.manager();
    expect((await mgr.load()).ready).toBe(true);
    const opts = buildCniOptions(ID, config);
    await mgr.setup(ID, '/var/run/netns/cni-proto', opts);
    expect((await mgr.check!(ID, '/var/run/netns/cni-proto', opts)).map((o) => `${o.network} ${o.outcome}`)).toEqual([
      'cni-loopback notSupported',
      'labnet passed',
    ]);
    await mgr.remove(ID, '/var/run/netns/cni-proto', opts);
    const runtime = (await box.log()).filter((e) => e.type !== 'loopback');
    await box.clearLog();

    // the lab: the same list as text, the same capabilities as the lab's flags give them
    const run = await lab().run({
      text: await conflist('1.0.0'),
      capabilities: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }], bandwidth: { ingressRate: 1_000_000 } },
    });
    expect([run.addOk, run.checkOk, run.delOk]).toEqual([true, true, true]);
    const labbed = await box.log();
    expect(stdinBy(labbed)).toEqual(stdinBy(runtime));
    expect(labbed.map((e) => `${e.verb} ${e.type}`)).toEqual([
      'ADD first',
      'ADD second',
      'CHECK first',
      'CHECK second',
      'DEL second',
      'DEL first',
    ]);
    // what the lab recorded is what the plugins read
    expect(run.plugins.map((p) => p.stdin)).toEqual(labbed.map((e) => e.stdin));
    expect(JSON.parse(labbed[0]!.stdin).runtimeConfig).toEqual({
      portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }],
      bandwidth: { ingressRate: 1_000_000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 },
    });
  });

  it('CHECK is gated as libcni gates it: a list older than 0.4.0 has none even with disableCheck, a newer one with disableCheck skips it', async () => {
    const old = await lab().run({ text: await conflist('0.3.1', { disableCheck: true }) });
    expect(old.checkSkipped).toBe('cniVersion 0.3.1 has no CHECK (0.4.0 and later)');
    expect(old.checkOk).toBeUndefined();
    const disabled = await lab().run({ text: await conflist('1.0.0', { disableCheck: true }) });
    expect(disabled.checkSkipped).toBe('disableCheck is set');
    expect(disabled.checkOk).toBeUndefined();
    expect((await box.log()).filter((e) => e.verb === 'CHECK')).toEqual([]);
    for (const r of [old, disabled]) expect([r.addOk, r.delOk]).toEqual([true, true]);
  });
});
