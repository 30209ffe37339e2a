/**
 * A pod's pause runs on its pod's runtime handler, as containerd and CRI-O run the sandbox (infra) container on the
 * runtime of the pod's runtime_handler (docs/semantics.md#runtime-handlers). Over fakes: where each verb goes, the
 * record that says so, records from before (every pause on runc under `<runDir>/runc`), and the start-up sweep that
 * never touches an app container nor another engine's container.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS } from '../../electron/engine/common/options';
import { CONTAINER_TYPE_ANNOTATION } from '../../electron/engine/runtime/container-spec';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import { pauseRuntimeRoot } from '../../electron/engine/runtime/oci-runtime';
import { OWNER_ANNOTATION } from '../../electron/engine/pods/ownership';
import { upgradeSandboxRecord } from '../../electron/engine/pods/record';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { buildTestEngine } from '../../testkit/fakes/test-engine';
import { createFakeCni, type FakeCni } from '../../testkit/fakes/fake-cni';
import { FakeSandboxFiles } from '../../testkit/fakes/fake-files';
import { fakeLiveReader } from '../../testkit/fakes/fake-kernel-commands';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { FakePauseRuntime } from '../../testkit/fakes/fake-runtime';

let dir: string;
let netns: FakeNetnsManager;
let runtime: FakePauseRuntime;
let cni: FakeCni;

const runDir = () => join(dir, 'run');

function makeEngine(): SandboxEngine {
  return buildTestEngine({
    options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state'), runDir: runDir(), cniCacheDir: join(dir, 'cache') },
    netns,
    cni,
    runtime,
    files: new FakeSandboxFiles(),
    liveReader: fakeLiveReader(),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => [...runtime.containers.values()].some((c) => c.pid === pid && c.status === 'running'),
    log: () => undefined,
  });
}

const pod = (name: string, runtimeHandler?: string) => ({
  config: { metadata: { name, namespace: 'ns', uid: `u-${name}` } },
  ...(runtimeHandler !== undefined ? { runtimeHandler } : {}),
});
const recordFile = (id: string) => join(dir, 'state', 'store', `${id}.json`);
const steps = async (engine: SandboxEngine, id: string) => (await engine.status(id)).trace.map((t) => t.step);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pph-unit-'));
  cni = await createFakeCni({ dir });
  netns = new FakeNetnsManager();
  runtime = new FakePauseRuntime(undefined, runDir());
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the pause runs on its pod’s runtime handler (containerd and CRI-O run the sandbox on the handler’s runtime)', () => {
  it('a crun pod’s pause starts, stops and is deleted on crun under <runDir>/crun, and its record says so', async () => {
    const engine = makeEngine();
    await engine.start();
    const { id } = await engine.run(pod('c', 'crun'));
    const at = { handler: 'crun', root: pauseRuntimeRoot(runDir(), 'crun') };
    expect(runtime.containers.get(id)?.at).toEqual(at);
    expect(JSON.parse(await readFile(recordFile(id), 'utf8')).pauseRuntime).toEqual(at);
    // the creation timeline names the runtime that ran it
    expect(await steps(engine, id)).toEqual(expect.arrayContaining(['conmon.create', 'crun.start']));
    expect(await steps(engine, id)).not.toContain('runc.start');

    await engine.stop(id);
    expect(runtime.containers.get(id)?.status).toBe('stopped');
    expect(runtime.calls.filter((c) => c.op === 'stop' && c.id === id).map((c) => c.handler)).toEqual(['crun']);
    await engine.remove(id);
    expect(runtime.containers.has(id)).toBe(false);
    expect(runtime.calls.filter((c) => c.id === id && c.handler === 'runc')).toEqual([]);
  });

  it('a pod naming no handler, or runc, keeps its pause on runc under <runDir>/runc', async () => {
    const engine = makeEngine();
    await engine.start();
    for (const handler of [undefined, '', 'runc']) {
      const { id } = await engine.run(pod(`r${handler ?? 'none'}`, handler));
      expect(runtime.containers.get(id)?.at).toEqual({ handler: 'runc', root: join(runDir(), 'runc') });
      expect(await steps(engine, id)).toEqual(expect.arrayContaining(['conmon.create', 'runc.start']));
      await engine.remove(id);
      expect(runtime.containers.has(id)).toBe(false);
    }
  });

  it('a crun pod whose pause fails to start is unwound on crun', async () => {
    const engine = makeEngine();
    await engine.start();
    runtime.startError = new Error('crun create failed: boom');
    await expect(engine.run(pod('f', 'crun'))).rejects.toThrow(/boom/);
    const undo = runtime.calls.filter((c) => c.op === 'stop' || c.op === 'delete');
    expect(undo.length).toBeGreaterThan(0);
    expect(undo.every((c) => c.handler === 'crun')).toBe(true);
  });
});

describe('records written before the pause ran on its pod’s handler', () => {
  it('load as runc under <runDir>/runc, the version unchanged', () => {
    const rec = upgradeSandboxRecord({ version: 1, id: 'a', runDir: '/x/run/sandboxes/a', runtimeHandler: 'crun' });
    expect(rec.version).toBe(1);
    expect(rec.pauseRuntime).toEqual({ handler: 'runc', root: '/x/run/runc' });
    // a recorded location is kept as it is
    const kept = upgradeSandboxRecord({ version: 1, id: 'b', runDir: '/x/run/sandboxes/b', pauseRuntime: { handler: 'crun', root: '/r' } });
    expect(kept.pauseRuntime).toEqual({ handler: 'crun', root: '/r' });
    expect(() => upgradeSandboxRecord({ version: 2, id: 'c', runDir: '/x' })).toThrow(/unsupported record version 2/);
  });

  it('a crun pod recorded then (its pause on runc) is reconciled, stopped and removed on runc after a restart', async () => {
    const first = makeEngine();
    await first.start();
    const { id } = await first.run(pod('old', 'crun'));
    await first.close();
    // what the engine before wrote: the pod's handler, but no pause location, and its pause under runc's root
    const raw = JSON.parse(await readFile(recordFile(id), 'utf8')) as Record<string, unknown>;
    delete raw.pauseRuntime;
    await writeFile(recordFile(id), JSON.stringify(raw));
    runtime.containers.get(id)!.at = { handler: 'runc', root: join(runDir(), 'runc') };

    const second = makeEngine();
    const report = await second.start();
    expect(report.problems).toEqual([]);
    expect(report.orphanContainers).toEqual([]);
    // the pause was found (a pause not found would have made the pod NOTREADY)
    expect((await second.status(id)).state).toBe('SANDBOX_READY');
    await second.stop(id);
    expect(runtime.containers.get(id)?.status).toBe('stopped');
    await second.remove(id);
    expect(runtime.containers.has(id)).toBe(false);
    await second.close();
  });
});

describe('the start-up sweep of pause roots', () => {
  it('kills an orphaned pause of ours on the handler it runs on; never an app container, nor another engine’s', async () => {
    const first = makeEngine();
    await first.start();
    const { stateDirId } = await first.info();
    const { id: orphan } = await first.run(pod('o', 'crun'));
    await first.close();
    await rm(recordFile(orphan));
    const crun = { handler: 'crun', root: pauseRuntimeRoot(runDir(), 'crun') };
    // an app container of ours that ended up under a pause root: the container recovery's, never the sandbox sweep's
    const app = 'a'.repeat(64);
    await runtime.start(
      app,
      '/b',
      { annotations: { [OWNER_ANNOTATION]: stateDirId!, [CONTAINER_TYPE_ANNOTATION]: 'container' } },
      { at: crun },
    );
    const foreign = 'f'.repeat(64);
    await runtime.start(foreign, '/b', { annotations: { [OWNER_ANNOTATION]: '0'.repeat(32) } }, { at: crun });

    const second = makeEngine();
    const report = await second.start();
    expect(report.orphanContainers).toEqual([orphan]);
    expect(runtime.containers.has(orphan)).toBe(false);
    expect(runtime.calls.filter((c) => c.id === orphan && (c.op === 'stop' || c.op === 'delete')).map((c) => c.handler)).toEqual([
      'crun',
      'crun',
    ]);
    expect(runtime.containers.get(app)?.status).toBe('running');
    expect(runtime.containers.get(foreign)?.status).toBe('running');
    const problems = report.problems.join('\n');
    expect(problems).toContain(
      `crun container ${app} (running) under this engine's crun root has no record here and is not ours (an app container`,
    );
    expect(problems).toContain(
      `crun container ${foreign} (running) under this engine's crun root has no record here and is not ours (owned by`,
    );
    await second.close();
  });
});
