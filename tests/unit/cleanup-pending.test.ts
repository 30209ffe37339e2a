/**
 * The unwind never forgets, over fakes: which plugins a failed run DELs, that one failing DEL does not stop
 * the others, that what is left stays visible and is retried exactly, that `remove --force` says what it leaves
 * behind, and that a pause exit is recorded and Stop still releases the network.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS } from '../../electron/engine/common/options';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { buildTestEngine } from '../../testkit/fakes/test-engine';
import { createFakeCni, type FakeCni } from '../../testkit/fakes/fake-cni';
import { FakeSandboxFiles } from '../../testkit/fakes/fake-files';
import { fakeLiveReader } from '../../testkit/fakes/fake-kernel-commands';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { FakePauseRuntime } from '../../testkit/fakes/fake-runtime';
import { hasCode } from '../../shared/domain/errors';
import { whatStopReleases } from '../../shared/domain/sandbox-release';

let dir: string;
let netns: FakeNetnsManager;
let cni: FakeCni;
let runtime: FakePauseRuntime;
let files: FakeSandboxFiles;

function makeEngine(): SandboxEngine {
  return buildTestEngine({
    options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state'), runDir: join(dir, 'run') },
    netns,
    cni,
    runtime,
    files,
    liveReader: fakeLiveReader(),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => [...runtime.containers.values()].some((c) => c.pid === pid && c.status === 'running'),
  });
}

const pod = (name = 'web', extra: object = {}) => ({ config: { metadata: { name, namespace: 'ns', uid: 'u' }, ...extra } });
const dels = () => cni.pluginCalls.filter((c) => c.verb === 'DEL' && c.network === 'containerd-net').map((c) => `${c.type}#${c.index}`);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-unit-'));
  netns = new FakeNetnsManager();
  cni = await createFakeCni({ dir });
  runtime = new FakePauseRuntime();
  files = new FakeSandboxFiles();
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function nothingLeft(list: unknown[]): void {
  expect(list).toEqual([]);
  expect(netns.pinned.size).toBe(0);
  expect(runtime.containers.size).toBe(0);
  expect(files.prepared.size).toBe(0);
  expect(cni.cache.size).toBe(0);
}

describe('the unwind of a failed run', () => {
  it('CNI spec stops a list DEL at the first error; Podscope keeps going so a failing portmap DEL does not strand the bridge', async () => {
    const engine = makeEngine();
    await engine.start();
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 2 },
      { verb: 'DEL', network: 'containerd-net', index: 1 },
    ];
    const err = await engine.run(pod()).catch((e: unknown) => e);
    expect(hasCode(err, 'CniError')).toBe(true);
    // every plugin the ADD executed, in reverse, past portmap's failure
    expect(dels()).toEqual(['bandwidth#2', 'portmap#1', 'bridge#0']);
    expect((err as Error).message).toMatch(/cleanup pending .*CNI DEL of portmap #1 on containerd-net\/eth0/);
    const [kept] = await engine.list();
    expect(kept?.state).toBe('SANDBOX_NOTREADY');
    expect(kept?.cleanupPending?.filter((p) => p.kind === 'cni').map((p) => `${p.plugin}#${p.index}`)).toEqual(['portmap#1']);
    expect(kept?.notReadyReason).toMatch(/^cleanup pending: CNI DEL of portmap #1/);
    // the netns is kept for the pending DEL (the bridge plugin reads the pod's addresses there)
    expect(netns.pinned.size).toBe(1);
    expect(kept?.cleanupPending?.some((p) => p.kind === 'netns')).toBe(true);
    // the pause was undone: the kept sandbox does not claim a running pause
    expect((await engine.status(kept!.id)).pause.status).toBe('deleted');
  });

  it('stop retries exactly what is left (only the plugin whose DEL failed), then remove forgets the sandbox', async () => {
    const engine = makeEngine();
    await engine.start();
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 2 },
      { verb: 'DEL', network: 'containerd-net', index: 1, once: true },
    ];
    await engine.run(pod()).catch(() => undefined);
    const [kept] = await engine.list();
    cni.pluginCalls.length = 0;
    await engine.stop(kept!.id);
    expect(dels()).toEqual(['portmap#1']);
    const st = await engine.status(kept!.id);
    expect(st.cleanupPending).toBeUndefined();
    expect(st.netnsClosed).toBe(true);
    await engine.remove(kept!.id);
    nothingLeft(await engine.list());
  });

  it('a failed retry keeps the sandbox, with the new error; a later retry that works releases it', async () => {
    const engine = makeEngine();
    await engine.start();
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 0 },
      { verb: 'DEL', network: 'containerd-net', index: 0, message: 'iptables busy' },
    ];
    await engine.run(pod()).catch(() => undefined);
    const [kept] = await engine.list();
    await expect(engine.remove(kept!.id)).rejects.toThrow(/iptables busy/);
    expect((await engine.list())[0]?.cleanupPending?.[0]).toMatchObject({
      plugin: 'bridge',
      index: 0,
      error: expect.stringContaining('iptables busy'),
    });
    cni.failures = [];
    await engine.remove(kept!.id);
    nothingLeft(await engine.list());
  });

  it('a plugin whose binary was not found never ran and holds nothing: it is not DELed and the unwind is clean', async () => {
    const engine = makeEngine();
    await engine.start();
    await cni.plugins.removeBinary('portmap');
    await expect(engine.run(pod())).rejects.toThrow(/failed to find plugin "portmap"/);
    expect(dels()).toEqual(['bridge#0']);
    nothingLeft(await engine.list());
  });

  it('plugins after the failing one never ran: their DEL is not run, so a broken one cannot pin the sandbox', async () => {
    const engine = makeEngine();
    await engine.start();
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 0 },
      { verb: 'DEL', network: 'containerd-net', index: 2 },
    ];
    await engine.run(pod()).catch(() => undefined);
    expect(dels()).toEqual(['bridge#0']);
    nothingLeft(await engine.list());
  });

  it('a run whose CNI ADD never executed anything (not ready) has nothing to DEL', async () => {
    const engine = makeEngine();
    await engine.start();
    await cni.setReady(false);
    await expect(engine.run(pod())).rejects.toSatisfy((e) => hasCode(e, 'CniError'));
    nothingLeft(await engine.list());
  });

  it('the pending cleanup survives an engine restart (it is in the record) and is retried from there', async () => {
    const first = makeEngine();
    await first.start();
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 1 },
      { verb: 'DEL', network: 'containerd-net', index: 0 },
    ];
    await first.run(pod()).catch(() => undefined);
    await first.close();
    const second = makeEngine();
    await second.start();
    const [kept] = await second.list();
    expect(kept?.cleanupPending?.find((p) => p.kind === 'cni')).toMatchObject({ plugin: 'bridge', index: 0 });
    cni.failures = [];
    cni.pluginCalls.length = 0;
    await second.remove(kept!.id);
    expect(dels()).toEqual(['bridge#0']);
    nothingLeft(await second.list());
  });
});

describe('remove --force', () => {
  it('gives up only after saying what it leaves behind, in the error and the trace', async () => {
    const engine = makeEngine();
    await engine.start();
    const events: string[] = [];
    engine.subscribe((e) => {
      if (e.type === 'sandbox.progress' && e.entry.step === 'remove.forced') events.push(e.entry.label);
    });
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 0 },
      { verb: 'DEL', network: 'containerd-net', index: 0, message: 'broken for good' },
    ];
    await engine.run(pod()).catch(() => undefined);
    const [kept] = await engine.list();
    await expect(engine.remove(kept!.id)).rejects.toThrow(/broken for good/);
    expect(await engine.list()).toHaveLength(1); // without force, still kept
    const err = await engine.remove(kept!.id, { force: true }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /removed by force, but its cleanup did not finish; left behind on the host .*CNI DEL of bridge #0 on containerd-net\/eth0.*broken for good/,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(/left behind on the host: CNI DEL of bridge #0/);
    expect(await engine.list()).toEqual([]);
    expect((await engine.info()).problems.join('\n')).toMatch(/removed by force.*CNI DEL of bridge #0/); // the engine page keeps saying so
    cni.failures = [];
    await engine.run(pod()); // the name is free again
  });
});

describe('pause exit', () => {
  it('is recorded (trace, status, the NOTREADY reason), and Stop on NOTREADY releases the network', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod('p', { port_mappings: [{ container_port: 80, host_port: 8080 }] }));
    runtime.containers.get(id)!.status = 'stopped';
    const [s] = await engine.list();
    expect(s?.state).toBe('SANDBOX_NOTREADY');
    expect(s?.notReadyReason).toMatch(/^pause exited .* at \d{4}-/);
    const st = await engine.status(id);
    expect(st.pauseExit?.at).toBeDefined();
    expect(st.trace.find((t) => t.phase === 'watch' && t.step === 'pause.exit')?.label).toMatch(/keeps its network until stopped/);
    const release = whatStopReleases(st);
    expect(release.join('\n')).toMatch(/CNI DEL of every network: addresses 10\.88\.0\.\d+, 2001:4860:4860::/);
    expect(release.join('\n')).toMatch(/host port DNAT 8080\/tcp→80/);
    expect(release.join('\n')).toMatch(/network namespace /);
    cni.pluginCalls.length = 0;
    await engine.stop(id);
    expect(dels()).toEqual(['bandwidth#2', 'portmap#1', 'bridge#0']);
    expect(netns.pinned.size).toBe(0);
    expect(cni.cache.size).toBe(0);
  });
});
