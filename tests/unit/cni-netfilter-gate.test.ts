import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import type { CniCallRecord, CniManager } from '../../electron/engine/cni/types';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { createFakeCni, type FakeCni } from '../../testkit/fakes/fake-cni';

const OPTS = {
  args: [['IgnoreUnknown', '1']] as Array<[string, string]>,
  capabilities: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
};

/** The fake plugins, with every portmap DEL held until released: counts how many run at once. */
class HeldPortmapDels implements ProcessRunner {
  inFlight = 0;
  most = 0;
  started = 0;
  readonly requests: ExecRequest[] = [];
  private readonly held: Array<() => void> = [];
  constructor(private readonly plugins: ProcessRunner) {}

  async run(req: ExecRequest): Promise<ExecResult> {
    this.requests.push(req);
    if (path.basename(req.file) !== 'portmap' || req.env?.CNI_COMMAND !== 'DEL') return this.plugins.run(req);
    this.started++;
    this.inFlight++;
    this.most = Math.max(this.most, this.inFlight);
    try {
      await new Promise<void>((resolve) => this.held.push(resolve));
      return await this.plugins.run(req);
    } finally {
      this.inFlight--;
    }
  }

  releaseAll(): void {
    for (const r of this.held.splice(0)) r();
  }
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('netfilter plugins (portmap, firewall) run a bounded number at once across sandboxes', () => {
  let root: string;
  let fake: FakeCni;
  let runner: HeldPortmapDels;
  const manager = (maxNetfilterPluginExecs: number): CniManager =>
    createCniManager({
      confDir: fake.confDir,
      binDirs: [fake.plugins.binDir],
      cacheDir: fake.cacheDir,
      maxConfNum: 1,
      runner,
      env: {},
      maxNetfilterPluginExecs,
    });
  const ids = Array.from({ length: 6 }, (_, i) => `pod${i}`);

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'psc-netfilter-gate-'));
    fake = await createFakeCni({ dir: root });
    runner = new HeldPortmapDels(fake.plugins);
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  async function setUp(mgr: CniManager): Promise<void> {
    await mgr.load();
    for (const id of ids) await mgr.setup(id, `/n-${id}`, OPTS);
  }

  it('holds the portmap DELs beyond the limit until one finishes, and every DEL still completes', async () => {
    const mgr = manager(2);
    await setUp(mgr);
    const removes = Promise.all(ids.map((id) => mgr.remove(id, `/n-${id}`, OPTS)));
    await vi.waitFor(() => expect(runner.inFlight).toBe(2));
    await vi.waitFor(() => expect(mgr.netfilterQueue!()).toEqual({ running: 2, waiting: ids.length - 2 }));
    await settle();
    expect(runner.started).toBe(2);
    // the loopback network is not a netfilter plugin: its DELs went through meanwhile
    const dels = (type: string) => runner.requests.filter((r) => r.env?.CNI_COMMAND === 'DEL' && path.basename(r.file) === type);
    expect(dels('loopback')).toHaveLength(ids.length);
    while (runner.started < ids.length || runner.inFlight > 0) {
      runner.releaseAll();
      await settle();
    }
    await removes;
    expect(runner.most).toBe(2);
    expect(fake.plugins.kernel.nat.v4).toEqual([]);
    for (const id of ids) expect(await mgr.cachedAttachments(id)).toEqual([]);
  });

  it('0 lifts the bound: every sandbox runs its portmap DEL at once', async () => {
    const mgr = manager(0);
    await setUp(mgr);
    const removes = Promise.all(ids.map((id) => mgr.remove(id, `/n-${id}`, OPTS)));
    await vi.waitFor(() => expect(runner.inFlight).toBe(ids.length));
    runner.releaseAll();
    await removes;
  });

  it('a DEL canceled while it waits for a slot fails at portmap without running it; a DEL that waited records the wait', async () => {
    const mgr = manager(1);
    await setUp(mgr);
    const records: CniCallRecord[] = [];
    const first = mgr.remove('pod0', '/n-pod0', OPTS, { record: (r) => records.push(r) });
    await vi.waitFor(() => expect(runner.inFlight).toBe(1));
    const cancel = new AbortController();
    const second = mgr.remove('pod1', '/n-pod1', OPTS, { signal: cancel.signal }).then(
      () => new Error('the canceled DEL succeeded'),
      (e: unknown) => e as Error,
    );
    const third = mgr.remove('pod2', '/n-pod2', OPTS, { record: (r) => records.push(r) });
    // both wait at the gate before the cancel: the third must have waited for its slot (its record says how long)
    await vi.waitFor(() => expect(mgr.netfilterQueue!()).toEqual({ running: 1, waiting: 2 }));
    cancel.abort();
    expect((await second).message).toMatch(
      /plugin type="portmap" failed \(delete\): canceled while waiting for one of the 1 slots for netfilter plugins/,
    );
    expect(runner.started).toBe(1);
    runner.releaseAll();
    await first;
    await vi.waitFor(() => expect(runner.inFlight).toBe(1));
    runner.releaseAll();
    await third;
    const portmapDels = records.filter((r) => r.step === 'cni.plugin' && r.plugin?.type === 'portmap');
    expect(portmapDels).toHaveLength(2);
    expect(portmapDels[0]!.detail).toBeUndefined();
    expect(portmapDels[1]!.detail).toMatchObject({ netfilterWaitMs: expect.any(Number) });
    expect(runner.most).toBe(1);
  });
});
