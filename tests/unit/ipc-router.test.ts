import { describe, expect, it, onTestFinished } from 'vitest';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createRouter } from '../../electron/ipc/router';
import { trustOrigins, type SenderInfo } from '../../electron/ipc/sender';
import { createTestEngine } from '../../testkit/fakes/test-engine';
import { createClient, type Transport } from '../../shared/ipc/client';
import type { PushedEvent } from '../../shared/ipc/events';
import { PodscopeError } from '../../shared/domain/errors';

// the Electron renderer's real origin: app:// is a non-special scheme, so WHATWG URL calls its origin "null"
const APP = 'app://podscope';
const trusted: SenderInfo = { transport: 'electron', url: `${APP}/index.html` };

/** The router over the real engine (touch points faked); engine and temp dir are closed when the test ends. */
async function setup() {
  const fakes = await createTestEngine();
  onTestFinished(() => fakes.close());
  const { engine } = fakes;
  const router = createRouter({ engine, endpoints: createEndpointRegistry({ local: engine }), isTrustedSender: trustOrigins([APP]) });
  const events: PushedEvent[] = [];
  router.subscribe((e) => events.push(e));
  const transport: Transport = {
    kind: 'memory',
    invoke: (channel, payload) => router.handle(channel, payload, trusted),
    onEvent: (l) => router.subscribe(l),
  };
  return { engine, fakes, router, events, client: createClient(transport) };
}

const config = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  port_mappings: [{ protocol: 'TCP', container_port: 80, host_port: 8080 }],
};

describe('IPC router', () => {
  it('routes a valid request to the service and defaults endpointId to local', async () => {
    const { client, events } = await setup();
    const { id } = await client.call('sandbox.run', { request: { config, requestId: 'r1' } });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const list = await client.call('sandbox.list', {});
    expect(list.map((s) => s.id)).toEqual([id]);
    expect(events.some((e) => e.kind === 'sandbox' && e.endpointId === 'local' && e.event.type === 'sandbox.added')).toBe(true);
    expect(events.some((e) => e.kind === 'sandbox' && e.event.type === 'sandbox.progress' && e.event.requestId === 'r1')).toBe(true);
  });

  it('serves the live kernel view, and a stopped sandbox comes back as a typed FailedPrecondition', async () => {
    const { client } = await setup();
    const { id } = await client.call('sandbox.run', { request: { config } });
    const live = await client.call('sandbox.live', { id });
    expect(live.ports[0]).toMatchObject({ hostPort: 8080, found: true });
    await client.call('sandbox.stop', { id });
    await expect(client.call('sandbox.live', { id })).rejects.toSatisfy(
      (e) => e instanceof PodscopeError && e.code === 'FailedPrecondition',
    );
    await expect(client.call('sandbox.live', { id: 42 } as never)).rejects.toSatisfy(
      (e) => e instanceof PodscopeError && e.code === 'InvalidArgument',
    );
  });

  it('rejects a bad payload with InvalidArgument naming the zod path', async () => {
    const { router } = await setup();
    const reply = await router.handle(
      'sandbox.run',
      { request: { config: { metadata: { name: 'x' }, port_mappings: [{ host_port: 'eighty' }] } } },
      trusted,
    );
    expect(reply.ok).toBe(false);
    if (reply.ok) return;
    expect(reply.error.code).toBe('InvalidArgument');
    expect(reply.error.message).toContain('request.config.port_mappings[0].host_port');
    expect(reply.error.details).toMatchObject({ issues: [{ path: ['request', 'config', 'port_mappings', '0', 'host_port'] }] });
  });

  it('rejects unknown keys and unknown channels', async () => {
    const { router } = await setup();
    const extra = await router.handle('sandbox.status', { id: 'abc', surprise: 1 }, trusted);
    expect(extra).toMatchObject({ ok: false, error: { code: 'InvalidArgument' } });
    const unknown = await router.handle('sandbox.exec', {}, trusted);
    expect(unknown).toMatchObject({ ok: false, error: { code: 'InvalidArgument', message: expect.stringContaining('unknown channel') } });
  });

  it('refuses a foreign sender before validating or calling anything', async () => {
    const { router, engine } = await setup();
    for (const url of [
      'https://evil.example/',
      'file:///tmp/other.html',
      'devtools://devtools/bundled/inspector.html',
      'app://evil/index.html',
      'app:podscope',
      'other://podscope/',
    ]) {
      const reply = await router.handle('sandbox.run', { request: { config } }, { transport: 'electron', url });
      expect(reply).toMatchObject({ ok: false, error: { code: 'FailedPrecondition', message: expect.stringContaining('not a trusted') } });
    }
    // an unauthenticated websocket is refused even from a listed origin
    const ws = await router.handle('sandbox.list', {}, { transport: 'websocket', url: APP });
    expect(ws.ok).toBe(false);
    expect(await engine.list()).toEqual([]);
  });

  it('round-trips a PodscopeError with code, message and details into a typed error', async () => {
    const { client } = await setup();
    const err = await client
      .call('sandbox.run', { request: { config: { ...config, annotations: { 'kubernetes.io/ingress-bandwidth': '10X' } } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodscopeError);
    expect(err).toMatchObject({ code: 'InvalidArgument', message: expect.stringContaining('kubernetes.io/ingress-bandwidth') });
    expect((err as PodscopeError).details).toBeDefined();
    const nf = await client.call('sandbox.status', { id: 'deadbeef' }).catch((e: unknown) => e);
    expect(nf).toMatchObject({ code: 'NotFound' });
  });

  it('reports an unknown endpoint as NotFound, and a CRI endpoint that cannot be reached is not added', async () => {
    const { client } = await setup();
    await expect(client.call('sandbox.list', { endpointId: 'containerd' })).rejects.toMatchObject({ code: 'NotFound' });
    await expect(client.call('endpoints.add', { address: '/nonexistent/podscope-test/containerd.sock' })).rejects.toThrow(
      /\/nonexistent\/podscope-test\/containerd\.sock/,
    );
    expect((await client.call('endpoints.list', {})).map((e) => e.id)).toEqual(['local']);
  });

  it('maps non-Podscope errors to Internal and stops fan-out after dispose', async () => {
    const { router, engine, fakes, events } = await setup();
    // creating the netns fails with a plain Error (not a PodscopeError); the engine passes it on as it is
    fakes.netns.createError = new Error('boom');
    expect(await router.handle('sandbox.run', { request: { config } }, trusted)).toMatchObject({
      ok: false,
      error: { code: 'Internal', message: 'boom' },
    });
    router.dispose();
    const before = events.length;
    await engine.run({ config });
    expect(events.length).toBe(before);
  });
});
