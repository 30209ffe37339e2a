/**
 * The sandbox service over fakes: the failure paths real parts cannot produce on demand (a plugin failing at a given
 * position, runc failing to start, an undo that fails, a crash between two steps).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS } from '../../electron/engine/common/options';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { buildTestEngine } from '../../testkit/fakes/test-engine';
import { createFakeCni, type FakeCni } from '../../testkit/fakes/fake-cni';
import { FakeSandboxFiles } from '../../testkit/fakes/fake-files';
import { fakeLiveReader } from '../../testkit/fakes/fake-kernel-commands';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { FakePauseRuntime } from '../../testkit/fakes/fake-runtime';
import { hasCode, PodscopeError } from '../../shared/domain/errors';
import type { SandboxEvent } from '../../shared/domain/sandbox';

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

function nothingLeft(engineList: unknown[]): void {
  expect(engineList).toEqual([]);
  expect(netns.pinned.size).toBe(0);
  expect(runtime.containers.size).toBe(0);
  expect(files.prepared.size).toBe(0);
  expect(files.shmMounted.size).toBe(0);
  expect(cni.cache.size).toBe(0);
}

describe('run', () => {
  it('creates netns, attaches lo + eth0, writes files, starts the pause container, and traces every step', async () => {
    const engine = makeEngine();
    await engine.start();
    const events: SandboxEvent[] = [];
    engine.subscribe((e) => {
      if (!e.type.startsWith('container.')) events.push(e as SandboxEvent);
    });
    const { id } = await engine.run({ ...pod(), requestId: 'r1' });
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_READY');
    expect(st.ip).toMatch(/^10\.88\.0\./);
    expect(st.additionalIps[0]).toMatch(/^2001:4860:4860::/);
    expect(st.trace.map((t) => t.step)).toEqual(
      expect.arrayContaining(['netns.create', 'cni.plugin', 'cni.setup', 'sandbox.files', 'pause.rootfs', 'conmon.create', 'runc.start']),
    );
    expect(events[0]?.type).toBe('sandbox.added');
    expect(events.at(-1)?.type).toBe('sandbox.changed');
    expect(events.filter((e) => e.type === 'sandbox.progress').every((e) => e.type === 'sandbox.progress' && e.requestId === 'r1')).toBe(
      true,
    );
    // CNI_ARGS as containerd sends them
    expect(cni.calls.find((c) => c.op === 'setup')?.opts?.args).toEqual([
      ['K8S_POD_NAMESPACE', 'ns'],
      ['K8S_POD_NAME', 'web'],
      ['K8S_POD_INFRA_CONTAINER_ID', id],
      ['K8S_POD_UID', 'u'],
      ['IgnoreUnknown', '1'],
    ]);
  });

  // containerd: "a runtime must call DEL even when ADD failed" — the teardown is registered before ADD.
  it.each([
    ['lo', 'cni-loopback', 0],
    ['eth0 first plugin', 'containerd-net', 0],
    ['eth0 middle plugin', 'containerd-net', 1],
    ['eth0 last plugin', 'containerd-net', 2],
  ])('a plugin failing at %s undoes everything, runs DEL, and releases the name', async (_what, network, index) => {
    const engine = makeEngine();
    await engine.start();
    cni.failures = [{ verb: 'ADD', network, index, once: true }];
    const err = await engine.run(pod()).catch((e: unknown) => e);
    expect(hasCode(err, 'CniError')).toBe(true);
    expect((err as Error).message).toMatch(/^failed to setup network for sandbox "[0-9a-f]{64}": /);
    expect(cni.calls.filter((c) => c.op === 'remove')).toHaveLength(1);
    nothingLeft(await engine.list());
    await engine.run(pod()); // the name is free again
  });

  it('runc failing to start undoes files, network and netns', async () => {
    const engine = makeEngine();
    await engine.start();
    runtime.startError = new PodscopeError('RuntimeError', 'runc run failed: nsexec: permission denied');
    await expect(engine.run(pod())).rejects.toThrow(/failed to run sandbox .*runc run failed/);
    nothingLeft(await engine.list());
  });

  it('when an undo fails the sandbox is kept (NOTREADY, with the error and its name) so remove can finish the job', async () => {
    const engine = makeEngine();
    await engine.start();
    runtime.startError = new PodscopeError('RuntimeError', 'runc run failed');
    netns.removeError = new Error('umount: device busy');
    const err = await engine.run(pod()).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/cleanup pending .*remove network namespace .*: umount: device busy/);
    const [kept] = await engine.list();
    expect(kept?.state).toBe('SANDBOX_NOTREADY');
    expect(kept?.internalState).toBe('Unknown');
    expect((await engine.status(kept!.id)).lastError?.message).toMatch(/runc run failed/);
    await expect(engine.run(pod())).rejects.toSatisfy((e) => hasCode(e, 'AlreadyExists'));
    await engine.remove(kept!.id);
    nothingLeft(await engine.list());
    await engine.run(pod());
  });

  it('an eth0 without IPs fails with containerd\'s "failed to find network info"', async () => {
    const engine = makeEngine();
    await engine.start();
    cni.results['containerd-net'] = () => ({ cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/x' }], ips: [] });
    await expect(engine.run(pod())).rejects.toThrow(/failed to find network info for sandbox/);
    nothingLeft(await engine.list());
  });

  it('host network skips netns and CNI (containerd), and status shows no IP', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod('h', { linux: { security_context: { namespace_options: { network: 2 } } } }));
    expect(netns.calls.filter((c) => c.op === 'create')).toEqual([]);
    expect(cni.calls.filter((c) => c.op === 'setup')).toEqual([]);
    const st = await engine.status(id);
    expect(st.hostNetwork).toBe(true);
    expect(st.ip).toBe('');
    await engine.remove(id);
    nothingLeft(await engine.list());
  });

  it.each([
    [{ config: { hostname: 'x' } }, /sandbox config must include metadata/],
    [{ config: { metadata: { name: 'a' }, port_mappings: [{ container_port: 'x' }] } }, /port_mappings\[0\]\.container_port/],
    [{ config: { metadata: { name: 'a' }, bogus: 1 } }, /Unrecognized key: "bogus"/],
    [{ config: { metadata: { name: 'a' } }, runtimeHandler: 'kata' }, /no runtime for "kata" is configured/],
    [
      { config: { metadata: { name: 'a' }, hostname: 'h', linux: { security_context: { namespace_options: { network: 2 } } } } },
      /hostname/,
    ],
  ])('refuses bad input before acquiring anything: %o', async (req, message) => {
    const engine = makeEngine();
    await engine.start();
    const err = await engine.run(req as never).catch((e: unknown) => e);
    expect(hasCode(err, 'InvalidArgument')).toBe(true);
    expect((err as Error).message).toMatch(message);
    expect(netns.calls.filter((c) => c.op === 'create')).toEqual([]);
    nothingLeft(await engine.list());
  });
});

describe('failure paths found in review', () => {
  // containerd forgets such a sandbox (a teardown failure matters there only when a CNI result was stored), and the
  // bridge's IPs and veth leak; Podscope keeps it with what is left (docs/semantics.md, cleanup on failure).
  it('ADD and DEL both failing, with no CNI result ever stored, keeps the sandbox NOTREADY with the bridge DEL pending until a retry succeeds', async () => {
    const engine = makeEngine();
    await engine.start();
    cni.failures = [
      { verb: 'ADD', network: 'containerd-net', index: 0 },
      { verb: 'DEL', network: 'containerd-net', index: 0 },
    ];
    await expect(engine.run(pod())).rejects.toSatisfy((e) => hasCode(e, 'CniError'));
    const [kept] = await engine.list();
    expect(kept?.state).toBe('SANDBOX_NOTREADY');
    expect(kept?.cleanupPending?.find((p) => p.kind === 'cni')).toMatchObject({
      network: 'containerd-net',
      ifName: 'eth0',
      plugin: 'bridge',
      index: 0,
    });
    cni.failures = [];
    await engine.remove(kept!.id);
    nothingLeft(await engine.list());
    await engine.run(pod());
  });

  it('a stored annotation that no longer validates never blocks stop or remove (release paths do not re-validate)', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod('bw', { annotations: { 'kubernetes.io/ingress-bandwidth': '10M' } }));
    const rec = (
      engine as unknown as { ctx: { store: { get(id: string): { config: { annotations: Record<string, string> } } } } }
    ).ctx.store.get(id);
    rec.config.annotations['kubernetes.io/ingress-bandwidth'] = '10'; // as if a newer engine's rules were stricter
    await engine.stop(id);
    await engine.remove(id);
    nothingLeft(await engine.list());
  });

  it('a liveness check racing remove does not bring the sandbox back', async () => {
    const slowDead = async () => {
      await new Promise((r) => setTimeout(r, 30));
      return false;
    };
    const engine = buildTestEngine({
      options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state'), runDir: join(dir, 'run') },
      netns,
      cni,
      runtime,
      files,
      liveReader: fakeLiveReader(),
      buildPauseSpec,
      engineOomScoreAdj: 0,
      cleanupTimeoutMs: 5000,
      processAlive: slowDead,
    });
    await engine.start();
    const { id } = await engine.run(pod());
    await Promise.all([engine.list(), engine.remove(id)]);
    expect(await engine.list()).toEqual([]);
    const again = makeEngine();
    await again.start();
    expect(await again.list()).toEqual([]); // nothing written back to disk either
  });

  it('a record that cannot be read keeps its pause container: start-up never treats it as an orphan', async () => {
    const first = makeEngine();
    await first.start();
    const { id } = await first.run(pod());
    await writeFile(join(dir, 'state', 'store', `${id}.json`), '{"version": 2');
    const second = makeEngine();
    const report = await second.start();
    expect(report.orphanContainers).toEqual([]);
    expect(runtime.containers.has(id)).toBe(true);
    expect(report.problems.join()).toContain(`${id}.json`);
  });

  it.each([
    [{ metadata: { name: 'a;b', namespace: 'ns', uid: 'u' } }, /metadata.name "a;b" must not contain ';' or '='/],
    [{ metadata: { name: 'a', namespace: 'ns', uid: 'u=1' } }, /metadata.uid "u=1" must not contain/],
    [
      { metadata: { name: 'a', namespace: 'ns', uid: 'u' }, port_mappings: [{ container_port: 80, host_port: 70000 }] },
      /port_mappings\[0\].host_port 70000 is not a port/,
    ],
    [
      { metadata: { name: 'a', namespace: 'ns', uid: 'u' }, port_mappings: [{ container_port: 0, host_port: 8080 }] },
      /port_mappings\[0\].container_port 0 is not a port/,
    ],
  ])('input a plugin would reject after allocating is refused up front: %o', async (config, message) => {
    const engine = makeEngine();
    await engine.start();
    await expect(engine.run({ config })).rejects.toSatisfy((e) => hasCode(e, 'InvalidArgument') && message.test((e as Error).message));
    expect(netns.calls.filter((c) => c.op === 'create')).toEqual([]);
  });

  it('a container-port-only mapping with container_port 0 is fine: it never reaches CNI', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run({
      config: {
        metadata: { name: 'a', namespace: 'ns', uid: 'u' },
        port_mappings: [
          { container_port: 0, host_port: 0 },
          { container_port: 80, host_port: 8080 },
        ],
      },
    });
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_READY');
    expect(st.portMappings.map((p) => p.passed)).toEqual([false, true]);
    // CNI got only the mapping with a host port, in its capability args and in portmap's runtimeConfig
    const only = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];
    expect(cni.calls.find((c) => c.op === 'setup')?.opts?.capabilities.portMappings).toEqual(only);
    const portmap = cni.pluginCalls.find((c) => c.verb === 'ADD' && c.type === 'portmap')!;
    expect(JSON.parse(portmap.stdin).runtimeConfig).toEqual({ portMappings: only });
    expect(st.hostPorts).toEqual(only);
  });
});

describe('stop, remove, status, list', () => {
  it('unknown ids: stop and remove succeed, status is NotFound; an ambiguous prefix is refused', async () => {
    const engine = makeEngine();
    await engine.start();
    await engine.stop('f'.repeat(64));
    await engine.remove('f'.repeat(64));
    await expect(engine.status('f'.repeat(64))).rejects.toSatisfy((e) => hasCode(e, 'NotFound'));
    const ids = [(await engine.run(pod('a'))).id, (await engine.run(pod('b'))).id];
    const common = ids[0]!.slice(
      0,
      [...ids[0]!].findIndex((c, i) => ids[1]![i] !== c),
    );
    if (common.length > 0) await expect(engine.status(common)).rejects.toSatisfy((e) => hasCode(e, 'InvalidArgument'));
    expect((await engine.status(ids[0]!.slice(0, 13))).id).toBe(ids[0]);
  });

  it('a failed stop keeps the error and a retry finishes it', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod());
    runtime.stopError = new PodscopeError('RuntimeError', 'runc kill: timed out');
    await expect(engine.stop(id)).rejects.toThrow(/timed out/);
    expect((await engine.status(id)).lastError?.message).toMatch(/timed out/);
    await engine.stop(id);
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_NOTREADY');
    expect(st.lastError).toBeUndefined();
    expect(st.ip).toBe('');
  });

  it('a pause process that exits makes the sandbox NOTREADY at the next look', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod());
    expect((await engine.status(id)).state).toBe('SANDBOX_READY');
    runtime.exit(id);
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_NOTREADY');
    expect(st.ip).not.toBe(''); // the network stays until stop, as in containerd
  });

  it("a pause under conmon: its conmon pid is recorded, and its exit code and finish time come from conmon's exit file", async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod());
    const monitorPid = (await engine.status(id)).pause.monitorPid;
    expect(monitorPid).toBe(runtime.containers.get(id)!.monitorPid);
    const before = Date.now();
    runtime.exit(id, 2);
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_NOTREADY');
    expect(st.pauseExit).toMatchObject({ exitCode: 2, finishedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(st.pauseExit).not.toHaveProperty('signal');
    expect(Date.parse(st.pauseExit!.finishedAt!)).toBeGreaterThanOrEqual(before - 1);
    expect(st.notReadyReason).toMatch(`pause exited with code 2 at ${st.pauseExit!.finishedAt}`);
    // conmon writes 128+N for a death by signal N
    const other = await engine.run(pod('killed'));
    runtime.exit(other.id, 137);
    expect((await engine.status(other.id)).pauseExit).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
  });

  it('a pause recorded without a conmon pid (started by an older engine) keeps the /proc look: no exit file is read', async () => {
    const first = makeEngine();
    await first.start();
    const { id } = await first.run(pod());
    await first.close();
    const file = join(dir, 'state', 'store', `${id}.json`);
    const rec = JSON.parse(await readFile(file, 'utf8')) as { pause: Record<string, unknown> };
    delete rec.pause.monitorPid;
    await writeFile(file, JSON.stringify(rec));
    const engine = makeEngine();
    await engine.start();
    expect((await engine.status(id)).state).toBe('SANDBOX_READY');
    const reads = vi.spyOn(runtime, 'exitInfo');
    runtime.exit(id, 2);
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_NOTREADY');
    expect(reads).not.toHaveBeenCalled();
    expect(st.pauseExit).toMatchObject({ note: expect.stringMatching(/not observable/) });
    expect(st.pauseExit).not.toHaveProperty('exitCode');
  });

  it('lists with filters: id prefix, state, labels, name regex; newest first', async () => {
    const engine = makeEngine();
    await engine.start();
    const a = await engine.run(pod('alpha', { labels: { app: 'x', tier: 'web' } }));
    await new Promise((r) => setTimeout(r, 2));
    const b = await engine.run(pod('beta', { labels: { app: 'x' } }));
    await engine.stop(a.id);
    expect((await engine.list()).map((s) => s.id)).toEqual([b.id, a.id]);
    expect((await engine.list({ labelSelector: { app: 'x', tier: 'web' } })).map((s) => s.id)).toEqual([a.id]);
    expect((await engine.list({ id: b.id.slice(0, 10) })).map((s) => s.id)).toEqual([b.id]);
    expect((await engine.list({ name: '^al' })).map((s) => s.id)).toEqual([a.id]);
    expect((await engine.list({ state: 'SANDBOX_NOTREADY' })).map((s) => s.id)).toEqual(expect.arrayContaining([a.id]));
  });
});

describe('state across restarts', () => {
  it('a crash between netns creation and CNI ADD leaves a record that a new engine lists and remove cleans', async () => {
    const first = makeEngine();
    await first.start();
    let releaseSetup!: () => void;
    const hang = new Promise<void>((r) => (releaseSetup = r));
    const realSetup = cni.setup.bind(cni);
    let inAdd!: () => void;
    const addStarted = new Promise<void>((r) => (inAdd = r));
    cni.setup = async (...args) => {
      inAdd();
      await hang;
      return realSetup(...args);
    };
    const abandoned = first.run(pod()).catch(() => undefined); // "crashes" while ADD is in flight
    await addStarted;
    expect(netns.pinned.size).toBe(1);

    cni.setup = realSetup;
    const second = makeEngine(); // a new process on the same state dir
    await second.start();
    const [found] = await second.list();
    expect(found?.internalState).toBe('Unknown');
    await expect(second.run(pod())).rejects.toSatisfy((e) => hasCode(e, 'AlreadyExists'));
    await second.remove(found!.id);
    expect(netns.pinned.size).toBe(0);
    expect(cni.calls.filter((c) => c.op === 'remove').length).toBeGreaterThan(0);
    expect(await second.list()).toEqual([]);
    releaseSetup();
    await abandoned;
  });
});

describe('preview and conditions', () => {
  it('previews what runtimeConfig each plugin would receive, only for declared capabilities', async () => {
    const engine = makeEngine();
    await engine.start();
    const p = await engine.preview(
      pod('p', {
        port_mappings: [{ container_port: 80, host_port: 8080 }, { container_port: 81 }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '1M' },
      }),
    );
    const byType = Object.fromEntries(p.plugins.map((x) => [x.type, x.runtimeConfig]));
    expect(byType.portmap).toEqual({ portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] });
    expect(byType.bandwidth).toEqual({ bandwidth: { ingressRate: 1_000_000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 } });
    expect(byType.bridge).toBeUndefined();
    expect(p.portMappings[1]?.passed).toBe(false);
  });

  it("reports NetworkReady=false with containerd's reason when CNI is not ready", async () => {
    const engine = makeEngine();
    await engine.start();
    await cni.setReady(false);
    const conditions = await engine.runtimeConditions();
    expect(conditions.find((c) => c.type === 'NetworkReady')).toMatchObject({
      status: false,
      reason: 'NetworkPluginNotReady',
      message: expect.stringMatching(/^Network plugin returns error: .*cni plugin not initialized/),
    });
    expect(conditions.find((c) => c.type === 'RuntimeReady')?.status).toBe(true);
  });
});
