/**
 * A pause under a live conmon is known to run from two kill(pid, 0) (pods/status.ts runsUnderLiveMonitor): status
 * and short lists skip the /proc read then, yet a pause that died, or one whose conmon is gone, still gets the exact
 * check. Over the touch-point fakes (the fake kill(0) and /proc answer from the fake runtime's state).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runsUnderLiveMonitor } from '../../electron/engine/common/proc';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

let t: TestEngine;
let existsCalls = 0;
let aliveCalls = 0;
const IMAGE = 'podscope.test/busybox:1';

beforeEach(async () => {
  existsCalls = 0;
  aliveCalls = 0;
  t = await createTestEngine({
    tmpPrefix: 'podscope-live-fast-',
    livenessHooks: { alive: () => void aliveCalls++, exists: () => void existsCalls++ },
  });
});

afterEach(async () => {
  await t.close();
});

const pod = async (name: string) => (await t.engine.run({ config: { metadata: { name, namespace: 'fast', uid: `u-${name}` } } })).id;

describe('liveness of a pause under conmon', () => {
  it('a running pause with its conmon: status and list answer READY from kill(0) alone, with no /proc read', async () => {
    const id = await pod('a');
    const probes = t.runtime.probes;
    expect((await t.engine.status(id)).state).toBe('SANDBOX_READY');
    expect((await t.engine.list()).map((s) => s.state)).toEqual(['SANDBOX_READY']);
    expect(t.runtime.probes).toBe(probes);
    // the pause's conmon and the pause, once for the status and once for the list
    expect(existsCalls).toBe(4);
  });

  it('a pause that died is NOTREADY on the next list: its pid is gone, so the exact check runs and finds it dead', async () => {
    const id = await pod('b');
    t.runtime.exit(id, 137);
    const probes = t.runtime.probes;
    expect((await t.engine.list()).map((s) => s.state)).toEqual(['SANDBOX_NOTREADY']);
    expect(t.runtime.probes).toBeGreaterThan(probes);
  });

  it('a status that finds the pause dead makes it NOTREADY for every read at once, while conmon has yet to write its exit file (as on a loaded host)', async () => {
    const id = await pod('d');
    t.runtime.exit(id, 143, { exitFileLater: true });
    // the status that notices waits for the exit file (conmon still runs): reads made meanwhile must agree with it
    const noticing = t.engine.status(id);
    await new Promise((r) => setTimeout(r, 20));
    expect((await t.engine.list()).map((s) => s.state)).toEqual(['SANDBOX_NOTREADY']);
    expect((await t.engine.status(id)).state).toBe('SANDBOX_NOTREADY');
    t.runtime.writeExitFile(id);
    const s = await noticing;
    expect(s.state).toBe('SANDBOX_NOTREADY');
    // the exit as conmon wrote it, once it came
    expect(s.pauseExit).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    expect((await t.engine.list()).map((x) => x.state)).toEqual(['SANDBOX_NOTREADY']);
  });

  it('a pause whose conmon was killed is asked the exact way (and still runs): READY, by a /proc read', async () => {
    const id = await pod('c');
    t.runtime.killMonitor(id);
    const probes = t.runtime.probes;
    expect((await t.engine.status(id)).state).toBe('SANDBOX_READY');
    expect(t.runtime.probes).toBe(probes + 1);
  });

  it('no conmon pid (a pause from an older engine) or no kill(0) at all means the exact check', () => {
    const exists = () => true;
    expect(runsUnderLiveMonitor(exists, 10, 9)).toBe(true);
    expect(runsUnderLiveMonitor(exists, 10, undefined)).toBe(false);
    expect(runsUnderLiveMonitor(undefined, 10, 9)).toBe(false);
    expect(runsUnderLiveMonitor((pid) => pid !== 9, 10, 9)).toBe(false);
    expect(runsUnderLiveMonitor((pid) => pid !== 10, 10, 9)).toBe(false);
  });
});

describe('liveness of a container under conmon', () => {
  async function running(podId: string): Promise<string> {
    await t.loadImage(IMAGE, { config: { Cmd: ['sh'] } });
    const { id } = await t.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'main' }, image: { image: IMAGE }, command: ['sleep', 'inf'] },
    });
    await t.engine.startContainer(id);
    return id;
  }

  it('ContainerStatus and a short ListContainers answer RUNNING from kill(0) alone', async () => {
    const id = await running(await pod('d'));
    const alive = aliveCalls;
    expect((await t.engine.containerStatus(id)).state).toBe('CONTAINER_RUNNING');
    expect((await t.engine.listContainers()).map((c) => c.state)).toEqual(['CONTAINER_RUNNING']);
    expect(aliveCalls).toBe(alive);
  });

  it('a container that exited is EXITED with its code on the next status: the exact check runs once its pids are gone', async () => {
    const id = await running(await pod('e'));
    t.containerRuntime.exit(id, 3);
    const alive = aliveCalls;
    const st = await t.engine.containerStatus(id);
    expect([st.state, st.exitCode]).toEqual(['CONTAINER_EXITED', 3]);
    expect(aliveCalls).toBeGreaterThan(alive);
  });
});
