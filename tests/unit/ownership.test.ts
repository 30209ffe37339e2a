/**
 * Ownership and start-up garbage collection over fakes: an engine only ever stops, kills or deletes what carries its
 * state dir id, and a read-only engine changes nothing at all.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS } from '../../electron/engine/common/options';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { buildTestEngine } from '../../testkit/fakes/test-engine';
import { isOwnedNetnsPath, netnsTag, OWNER_ANNOTATION } from '../../electron/engine/pods/ownership';
import { ResultCache } from '../../electron/engine/cni/result-cache';
import { newNetnsName } from '../../electron/engine/netns/linux-netns';
import { createFakeCni, type FakeCni } from '../../testkit/fakes/fake-cni';
import { FakeSandboxFiles } from '../../testkit/fakes/fake-files';
import { fakeLiveReader } from '../../testkit/fakes/fake-kernel-commands';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { FakePauseRuntime } from '../../testkit/fakes/fake-runtime';
import { hasCode } from '../../shared/domain/errors';

let dir: string;
let netns: FakeNetnsManager;
let runtime: FakePauseRuntime;
let cni: FakeCni;
let log: string[];

function makeEngine(opts: { stateDir?: string; readOnly?: boolean } = {}): SandboxEngine {
  return buildTestEngine({
    options: {
      ...DEFAULT_ENGINE_OPTIONS,
      stateDir: opts.stateDir ?? join(dir, 'state'),
      runDir: join(dir, 'run'),
      cniCacheDir: join(dir, 'cache'),
    },
    netns,
    cni,
    runtime,
    files: new FakeSandboxFiles(),
    liveReader: fakeLiveReader(),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => [...runtime.containers.values()].some((c) => c.pid === pid && c.status === 'running'),
    readOnly: opts.readOnly,
    log: (l) => log.push(l),
  });
}

const pod = (name = 'web') => ({ config: { metadata: { name, namespace: 'ns', uid: 'u' } } });
const annotations = (id: string) => (runtime.containers.get(id)!.spec as { annotations: Record<string, string> }).annotations;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-own-'));
  cni = await createFakeCni({ dir });
  netns = new FakeNetnsManager();
  runtime = new FakePauseRuntime();
  log = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ownership marks', () => {
  it('stamps the state dir id on the pause container and folds its tag into the netns name; a restart keeps the id', async () => {
    const engine = makeEngine();
    await engine.start();
    const { stateDirId } = await engine.info();
    expect(stateDirId).toMatch(/^[0-9a-f]{32}$/);
    expect((await readFile(join(dir, 'state', 'engine-id'), 'utf8')).trim()).toBe(stateDirId);
    const { id } = await engine.run(pod());
    expect(annotations(id)[OWNER_ANNOTATION]).toBe(stateDirId);
    const path = (await engine.status(id)).netnsPath!;
    // still containerd's shape, so tools that expect it keep working
    expect(basename(path)).toMatch(/^cni-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(isOwnedNetnsPath(path, netnsTag(stateDirId!))).toBe(true);
    expect(isOwnedNetnsPath(join('/var/run/netns', newNetnsName()), netnsTag(stateDirId!))).toBe(false);
    const again = makeEngine();
    await again.start();
    expect((await again.info()).stateDirId).toBe(stateDirId);
  });
});

describe('start-up garbage collection', () => {
  it("kills and deletes only containers carrying our id; another engine's and unmarked ones are reported and left alone", async () => {
    const first = makeEngine();
    await first.start();
    const { id: ours } = await first.run(pod('ours'));
    // our record disappears behind the engine's back: the container is ours with no record
    await rm(join(dir, 'state', 'store', `${ours}.json`));
    const foreign = 'f'.repeat(64);
    const unmarked = 'e'.repeat(64);
    await runtime.start(foreign, '/b', { annotations: { [OWNER_ANNOTATION]: '0'.repeat(32) } }, {});
    await runtime.start(unmarked, '/b', { annotations: {} }, {});

    const second = makeEngine();
    const report = await second.start();
    expect(report.orphanContainers).toEqual([ours]);
    expect(runtime.containers.has(ours)).toBe(false);
    expect(runtime.containers.get(foreign)?.status).toBe('running');
    expect(runtime.containers.get(unmarked)?.status).toBe('running');
    const info = await second.info();
    // its netns lost its record too, and goes the same way
    expect(info.startupGc!.map((g) => g.kind).sort()).toEqual(['netns', 'runc-container']);
    expect(info.startupGc!.filter((g) => g.kind === 'runc-container')).toEqual([
      expect.objectContaining({ kind: 'runc-container', id: ours, action: expect.stringContaining('killed and deleted') }),
    ]);
    expect(info.problems.join('\n')).toContain(
      `runc container ${foreign} (running) under this engine's runc root has no record here and is not ours (owned by state dir id ${'0'.repeat(32)}): left alone`,
    );
    expect(info.problems.join('\n')).toContain(
      `${unmarked} (running) under this engine's runc root has no record here and is not ours (no owner annotation)`,
    );
    expect(log.join('\n')).toContain(`start-up GC: runc-container ${ours}: killed and deleted`);
  });

  it('collects netns of ours that no record names, never one without our tag, nor one an unreadable record names', async () => {
    const first = makeEngine();
    await first.start();
    const { id: kept } = await first.run(pod('kept'));
    const { id: lost } = await first.run(pod('lost'));
    const { id: broken } = await first.run(pod('broken'));
    const keptPath = (await first.status(kept)).netnsPath!;
    const lostPath = (await first.status(lost)).netnsPath!;
    const brokenPath = (await first.status(broken)).netnsPath!;
    await rm(join(dir, 'state', 'store', `${lost}.json`));
    await writeFile(join(dir, 'state', 'store', `${broken}.json`), `{"version":99,"netnsPath":"${brokenPath}"`);
    const containerds = join('/var/run/netns', newNetnsName());
    netns.pinned.add(containerds);

    const second = makeEngine();
    await second.start();
    expect([...netns.pinned].sort()).toEqual([keptPath, brokenPath, containerds].sort());
    expect((await second.info()).startupGc!.filter((g) => g.kind === 'netns')).toEqual([
      expect.objectContaining({ path: lostPath, action: expect.stringContaining('unmounted and deleted') }),
    ]);
  });

  it("deletes half-written records and cache temps of our sandboxes, never another runtime's temps", async () => {
    const first = makeEngine();
    await first.start();
    const { id } = await first.run(pod());
    const results = join(dir, 'cache', 'results');
    await mkdir(results, { recursive: true });
    const ourTemp = join(results, `psc-net-${id}-eth0.tmp-4242-0badc0de`);
    const otherTemp = join(results, `psc-net-${'a'.repeat(64)}-eth0.tmp-4242-0badc0de`);
    const halfRecord = join(dir, 'state', 'store', `${id}.json.4242.0.tmp`);
    await writeFile(ourTemp, '{"kind":');
    await writeFile(otherTemp, '{"kind":');
    await writeFile(halfRecord, '{"ver');

    const second = makeEngine();
    await second.start();
    expect((await readdir(results)).sort()).toEqual([basename(otherTemp)]);
    expect(await readdir(join(dir, 'state', 'store'))).toEqual([`${id}.json`]);
    const gc = (await second.info()).startupGc!;
    expect(gc.map((g) => [g.kind, g.path])).toEqual(
      expect.arrayContaining([
        ['record-temp', halfRecord],
        ['cni-cache-temp', ourTemp],
      ]),
    );
    expect(gc).toHaveLength(2);
  });

  it('removing a cache entry also removes temps a crashed write of that entry left', async () => {
    const cache = new ResultCache(join(dir, 'cache'));
    const key = { networkName: 'net', containerId: 'c'.repeat(64), ifName: 'eth0' };
    await cache.write({ ...key, config: Buffer.from('{}'), netns: '/n', cniArgs: [], capabilityArgs: {}, result: {} });
    await writeFile(`${cache.filePath(key)}.tmp-1-abcdef01`, '');
    await writeFile(join(cache.dir, `net-${'d'.repeat(64)}-eth0.tmp-1-abcdef01`), '');
    await cache.remove(key);
    expect(await readdir(cache.dir)).toEqual([`net-${'d'.repeat(64)}-eth0.tmp-1-abcdef01`]);
  });
});

describe('a read-only engine changes nothing', () => {
  it('derives NotReady in memory only, kills no orphan, deletes no temp, and refuses run/stop/remove', async () => {
    const first = makeEngine();
    await first.start();
    const { id } = await first.run(pod());
    const recordFile = join(dir, 'state', 'store', `${id}.json`);
    const before = await readFile(recordFile, 'utf8');
    runtime.exit(id); // the pause died: a reader shows NOTREADY
    const orphan = 'b'.repeat(64);
    const { stateDirId } = await first.info();
    await runtime.start(orphan, '/b', { annotations: { [OWNER_ANNOTATION]: stateDirId! } }, {});
    const halfRecord = join(dir, 'state', 'store', `${id}.json.1.0.tmp`);
    await writeFile(halfRecord, '');

    const reader = makeEngine({ readOnly: true });
    await reader.start();
    expect((await reader.list())[0]?.state).toBe('SANDBOX_NOTREADY');
    expect(await readFile(recordFile, 'utf8')).toBe(before);
    expect(runtime.containers.get(orphan)?.status).toBe('running');
    expect(await readdir(join(dir, 'state', 'store'))).toContain(basename(halfRecord));
    expect((await reader.info()).startupGc).toEqual([]);
    expect((await reader.info()).readOnly).toBe(true);
    for (const verb of [() => reader.run(pod('x')), () => reader.stop(id), () => reader.remove(id)]) {
      await expect(verb()).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition') && /opened read-only/.test((e as Error).message));
    }
    expect(runtime.calls.filter((c) => c.op === 'stop' || c.op === 'delete')).toEqual([]);
  });

  it('on a state dir nobody has used creates nothing, not even the dir', async () => {
    const reader = makeEngine({ stateDir: join(dir, 'fresh'), readOnly: true });
    await reader.start();
    expect(await reader.list()).toEqual([]);
    expect(await readdir(dir)).not.toContain('fresh');
  });
});
