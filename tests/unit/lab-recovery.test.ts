/**
 * Start-up teardown of lab runs an engine was killed in (LabService.recoverInterrupted), over a fake netns manager
 * and a runner that records plugin execs: which in-flight records are torn down (owner gone, or its pid reused by a
 * later process), which are left alone (owner still running: a CLI run beside a starting daemon; a namespace with no
 * record), and what is kept when DEL fails. The real kill-and-restart test is tests/real/lab-gc-probe.test.ts.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processIdentity, type InflightRecord } from '../../electron/engine/lab/inflight';
import { emptySnapshot } from '../../electron/engine/lab/kernel';
import { LabService } from '../../electron/engine/lab/service';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';

/** the plugins' execs, scripted: every one succeeds with no output, a DEL fails while `failDel` is set */
class RecordingRunner extends ScriptedRunner {
  failDel = false;
  constructor() {
    super();
    this.on((req) => this.failDel && req.env?.CNI_COMMAND === 'DEL', {
      exitCode: 1,
      stdout: JSON.stringify({ cniVersion: '1.0.0', code: 11, msg: 'try again' }),
    });
  }
  /** what each exec was: its verb, plugin binary, container id and stdin */
  get execs() {
    return this.calls.map((req) => ({
      verb: req.env?.CNI_COMMAND,
      file: req.file,
      containerId: req.env?.CNI_CONTAINERID,
      stdin: req.input,
    }));
  }
}

const TEXT = JSON.stringify({
  cniVersion: '1.0.0',
  name: 'rec-net',
  plugins: [
    { type: 'bridge', bridge: 'rec0', ipam: { type: 'host-local', ranges: [[{ subnet: '10.99.1.0/24' }]] } },
    { type: 'portmap', capabilities: { portMappings: true } },
  ],
});

describe('lab start-up teardown of interrupted runs', () => {
  let dir = '';
  let netns: FakeNetnsManager;
  let runner: RecordingRunner;
  let lab: LabService;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'psl-labrec-'));
    const bin = join(dir, 'bin');
    await mkdir(bin);
    for (const p of ['bridge', 'portmap', 'host-local']) {
      await writeFile(join(bin, p), '#!/bin/false\n');
      await chmod(join(bin, p), 0o755);
    }
    netns = new FakeNetnsManager(join(dir, 'netns'));
    runner = new RecordingRunner();
    lab = new LabService({
      options: { stateDir: dir, netnsDir: join(dir, 'netns'), cniConfDir: join(dir, 'net.d'), cniBinDirs: [bin], pluginTimeoutMs: 5000 },
      runner,
      netns,
      kernel: { read: async () => ({ snapshot: emptySnapshot(), errors: [] }) },
      liveNetworks: async () => [],
      recordedAdd: async () => {
        throw new Error('none');
      },
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function leave(id: string, owner: InflightRecord['owner']): Promise<InflightRecord> {
    const rec: InflightRecord = {
      id,
      owner,
      createdAt: new Date().toISOString(),
      text: TEXT,
      capabilities: { portMappings: [{ hostPort: 28123, containerPort: 80, protocol: 'tcp' }] },
      containerId: `podscope-lab-${id}`,
      netns: join(dir, 'netns', `podscope-lab-${id}`),
      ifName: 'eth0',
    };
    await mkdir(join(dir, 'lab', 'inflight'), { recursive: true });
    await writeFile(join(dir, 'lab', 'inflight', `${id}.json`), JSON.stringify(rec));
    netns.pinned.add(rec.netns);
    return rec;
  }

  it('a run whose process is gone (its pid now another process: start time differs) gets DEL with the recorded conflist and capability args, its netns removed, and is kept as recovered', async () => {
    const me = await processIdentity(process.pid);
    const rec = await leave('20260101T000000Z-aaaaaa', { pid: process.pid, startTicks: String(Number(me.startTicks) - 1) });
    const items = await lab.recoverInterrupted();
    expect(items).toEqual([
      {
        runId: rec.id,
        netns: rec.netns,
        action: `CNI DEL with the recorded conflist (2 plugin execs): ok; netns podscope-lab-${rec.id} unmounted and deleted`,
      },
    ]);
    // libcni's DEL order: the list reversed, each with the run's container id and the recorded port mapping
    expect(runner.execs.map((e) => `${e.verb} ${e.file.split('/').pop()} ${e.containerId}`)).toEqual([
      `DEL portmap ${rec.containerId}`,
      `DEL bridge ${rec.containerId}`,
    ]);
    expect(JSON.parse(runner.execs[0]!.stdin!).runtimeConfig).toEqual({
      portMappings: [{ hostPort: 28123, containerPort: 80, protocol: 'tcp' }],
    });
    expect(netns.pinned.has(rec.netns)).toBe(false);
    expect(await readdir(join(dir, 'lab', 'inflight'))).toEqual([]);
    const run = await lab.get(rec.id);
    expect(run.recovered?.interruptedPid).toBe(process.pid);
    expect(run.name).toBe('rec-net');
    expect(run.success).toBe(false);
  });

  it('a run whose process is still running (e.g. a CLI run beside a starting daemon) and a lab namespace with no record are left alone', async () => {
    const rec = await leave('20260101T000000Z-bbbbbb', await processIdentity(process.pid));
    const stranger = join(dir, 'netns', 'podscope-lab-someone-elses');
    netns.pinned.add(stranger);
    expect(await lab.recoverInterrupted()).toEqual([]);
    expect(runner.execs).toEqual([]);
    expect(netns.pinned.has(rec.netns)).toBe(true);
    expect(netns.pinned.has(stranger)).toBe(true);
    expect(await readdir(join(dir, 'lab', 'inflight'))).toEqual([`${rec.id}.json`]);
  });

  it('when DEL fails the marker stays (the next start-up tries again) and the failure is reported', async () => {
    runner.failDel = true;
    const rec = await leave('20260101T000000Z-cccccc', { pid: 2 ** 22 + 17 });
    const [item] = await lab.recoverInterrupted();
    expect(item!.error).toMatch(/CNI DEL/);
    expect(await readdir(join(dir, 'lab', 'inflight'))).toEqual([`${rec.id}.json`]);
    const run = JSON.parse(await readFile(join(dir, 'lab', `${rec.id}.json`), 'utf8'));
    expect(run.recovered.actions.some((a: string) => a.startsWith('FAILED CNI DEL'))).toBe(true);
    // the next start-up: DEL works now, so the marker goes
    runner.failDel = false;
    runner.calls.length = 0;
    const [again] = await lab.recoverInterrupted();
    expect(again!.error).toBeUndefined();
    expect(runner.execs.map((e) => e.verb)).toEqual(['DEL', 'DEL']);
    expect(await readdir(join(dir, 'lab', 'inflight'))).toEqual([]);
  });
});
