/** The containers.list channel and container events through the IPC router, over the real engine and its fakes. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createRouter } from '../../electron/ipc/router';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import type { PushedEvent } from '../../shared/ipc/events';

let t: TestEngine;
beforeEach(async () => {
  t = await createTestEngine({ tmpPrefix: 'podscope-c1-ipc-' });
  await t.loadImage('podscope.test/busybox:1');
});
afterEach(async () => {
  await t.close();
});

describe('containers over IPC', () => {
  it('lists containers (filtered by pod) and pushes container events apart from sandbox events', async () => {
    const router = createRouter({ engine: t.engine, endpoints: createEndpointRegistry({ local: t.engine }), isTrustedSender: () => true });
    const pushed: PushedEvent[] = [];
    router.subscribe((e) => pushed.push(e));
    const { id: pod } = await t.engine.run({ config: { metadata: { name: 'p', namespace: 'n', uid: 'u' } } });
    const { id } = await t.engine.createContainer({
      podSandboxId: pod,
      config: { metadata: { name: 'c' }, image: { image: 'podscope.test/busybox:1' }, command: ['true'] },
    });
    const all = await router.handle('containers.list', { endpointId: 'local' }, { transport: 'memory', url: 'test://' });
    expect(all).toMatchObject({ ok: true, result: [{ id, podSandboxId: pod, state: 'CONTAINER_CREATED', name: 'c_p_n_u_0' }] });
    const other = await router.handle(
      'containers.list',
      { endpointId: 'local', filter: { podSandboxId: 'ffff' } },
      { transport: 'memory', url: 'test://' },
    );
    expect(other).toEqual({ ok: true, result: [] });
    const bad = await router.handle(
      'containers.list',
      { endpointId: 'local', filter: { state: 'RUNNING' } },
      { transport: 'memory', url: 'test://' },
    );
    expect(bad).toMatchObject({ ok: false, error: { code: 'InvalidArgument' } });
    expect(pushed.filter((e) => e.kind === 'container').map((e) => e.kind === 'container' && e.event.type)).toEqual(['container.added']);
    expect(pushed.some((e) => e.kind === 'sandbox' && e.event.type.startsWith('container.'))).toBe(false);
    router.dispose();
  });
});
