/**
 * CreateContainer and StartContainer record what they did, step by step with their times, in the container's record
 * (ContainerStatusView.trace), as RunPodSandbox does for a pod: the steps a developer needs to see where a start
 * spends its time, and which step failed. Over the touch-point fakes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { PodscopeError } from '../../shared/domain/errors';

let t: TestEngine;
const IMAGE = 'podscope.test/busybox:1';

beforeEach(async () => {
  t = await createTestEngine({ tmpPrefix: 'podscope-ctr-steps-' });
  await t.loadImage(IMAGE, { config: { Cmd: ['sh'] } });
});

afterEach(async () => {
  await t.close();
});

async function created(): Promise<string> {
  const { id: podId } = await t.engine.run({ config: { metadata: { name: 'p', namespace: 'steps', uid: 'u-p' } } });
  const { id } = await t.engine.createContainer({
    podSandboxId: podId,
    config: { metadata: { name: 'main' }, image: { image: IMAGE }, command: ['sleep', 'inf'] },
  });
  return id;
}

describe('a container records its create and start steps', () => {
  it('create: image, rootfs, user, seccomp, each timed and ok; start adds the runtime start with the pids it got', async () => {
    const id = await created();
    const afterCreate = (await t.engine.containerStatus(id)).trace;
    expect(afterCreate.map((e) => [e.phase, e.step, e.ok])).toEqual([
      ['create', 'image.resolve', true],
      ['create', 'rootfs.prepare', true],
      ['create', 'user.resolve', true],
      ['create', 'seccomp.load', true],
    ]);
    for (const e of afterCreate) {
      expect(e.durationMs).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(Date.parse(e.startedAt))).toBe(false);
    }
    expect(afterCreate[3]!.detail).toEqual({ applied: 'unconfined' });

    await t.engine.startContainer(id);
    const st = await t.engine.containerStatus(id);
    const start = st.trace.filter((e) => e.phase === 'start');
    expect(start.map((e) => [e.step, e.ok])).toEqual([['runtime.start', true]]);
    expect(start[0]!.detail).toEqual({ pid: st.pid, monitorPid: st.monitorPid });
    expect(start[0]!.label).toBe('start under conmon on runc');
  });

  it('a start that fails keeps the failed step with its error in the record (and the container is EXITED, StartError)', async () => {
    const id = await created();
    t.containerRuntime.startError = new PodscopeError('RuntimeError', 'crun create failed: boom');
    await expect(t.engine.startContainer(id)).rejects.toThrow(/boom/);
    const st = await t.engine.containerStatus(id);
    expect([st.state, st.reason]).toEqual(['CONTAINER_EXITED', 'StartError']);
    const failed = st.trace.find((e) => e.phase === 'start')!;
    expect([failed.step, failed.ok, failed.error?.message]).toEqual(['runtime.start', false, 'crun create failed: boom']);
  });
});
