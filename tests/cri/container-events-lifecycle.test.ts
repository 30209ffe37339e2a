/**
 * GetContainerEvents subscription lifecycle: a client that cancels while the server is still listing sandboxes
 * must not leave its engine subscription behind, and a client that stops reading gets RESOURCE_EXHAUSTED (with the
 * subscription dropped) instead of an ever-growing server-side queue.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { status as Code, type ServiceError } from '@grpc/grpc-js';
import type { SandboxEvent, SandboxSummary } from '../../shared/domain/sandbox';
import type { SandboxEventListener } from '../../electron/engine/options';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import type * as pb from '../../electron/cri/generated/runtime_v1';
import { createFakeEngine, type FakeEngine } from './helpers/fake-engine';
import { rawClient, tempDir } from './helpers/grpc';

/** The fake engine with its subscriptions counted and its listeners reachable. */
function instrumented(): { engine: FakeEngine; active: () => number; listeners: Set<SandboxEventListener> } {
  const engine = createFakeEngine();
  const listeners = new Set<SandboxEventListener>();
  const subscribe = engine.subscribe.bind(engine);
  engine.subscribe = (l) => {
    listeners.add(l);
    const off = subscribe(l);
    return () => { listeners.delete(l); off(); };
  };
  return { engine, active: () => listeners.size, listeners };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(engine: FakeEngine, extra: { eventsHighWaterMark?: number } = {}): Promise<{ server: CriServer; client: pb.RuntimeServiceClient }> {
  const tmp = tempDir('podscope-cri-events-');
  const server = await startCriServer({ engine, socketPath: join(tmp.dir, 'cri.sock'), ...extra });
  const client = rawClient(server.socketPath);
  cleanups.push(() => tmp.cleanup(), () => server.close(), () => client.close());
  return { server, client };
}

const summary = (id: string, labels: Record<string, string> = {}): SandboxSummary => ({
  id, name: `${id}_ns_uid_0`, metadata: { name: id, namespace: 'ns', uid: 'uid', attempt: 0 }, state: 'SANDBOX_NOTREADY', internalState: 'Unknown',
  createdAt: new Date().toISOString(), createdAtNs: '1', labels, annotations: {}, runtimeHandler: '', hostNetwork: false, ip: '', additionalIps: [], hostPorts: [], bandwidth: {},
});

describe('GetContainerEvents subscription lifecycle', () => {
  it('a cancel during the initial (slow) list unsubscribes once the list returns', async () => {
    const { engine, active } = instrumented();
    let release!: () => void;
    let listCalls = 0;
    engine.list = () => { listCalls++; return new Promise<SandboxSummary[]>((r) => { release = () => r([]); }); };
    const { client } = await serve(engine);
    const stream = client.getContainerEvents({});
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    await expect.poll(() => listCalls).toBe(1);
    expect(active()).toBe(1);
    stream.cancel();
    await new Promise((r) => setTimeout(r, 300)); // the server sees the cancel while list() is still pending
    release();
    await expect.poll(() => active(), { timeout: 3000 }).toBe(0);
  });

  it('a list that fails after the cancel neither crashes nor leaks', async () => {
    const { engine, active } = instrumented();
    let fail!: () => void;
    engine.list = () => new Promise<SandboxSummary[]>((_r, reject) => { fail = () => reject(new Error('list broke')); });
    const { client } = await serve(engine);
    const stream = client.getContainerEvents({});
    stream.on('error', () => undefined);
    await expect.poll(() => active()).toBe(1);
    stream.cancel();
    await new Promise((r) => setTimeout(r, 300));
    fail();
    await expect.poll(() => active(), { timeout: 3000 }).toBe(0);
  });

  it('a list failure without a cancel ends the stream with the error and unsubscribes', async () => {
    const { engine, active } = instrumented();
    engine.failNext('list', new Error('disk on fire'));
    const { client } = await serve(engine);
    const stream = client.getContainerEvents({});
    stream.on('data', () => undefined);
    const err = await new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    expect(err.code).toBe(Code.UNKNOWN);
    expect(err.details).toBe('disk on fire');
    expect(active()).toBe(0);
  });

  it('a client that stops reading gets RESOURCE_EXHAUSTED and its subscription is dropped', async () => {
    const { engine, active, listeners } = instrumented();
    const { client } = await serve(engine, { eventsHighWaterMark: 8 });
    const stream = client.getContainerEvents({});
    let received = 0;
    stream.on('data', () => { received++; });
    const failed = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    await expect.poll(() => active()).toBe(1);
    stream.pause(); // stop reading: HTTP/2 flow control fills up, then the server's own queue
    const big = { note: 'x'.repeat(8192) };
    let emitted = 0;
    // 4000 × ~8 KiB = ~32 MiB if nothing pushed back
    for (let batch = 0; batch < 80 && active() > 0; batch++) {
      for (let i = 0; i < 50; i++) {
        const e: SandboxEvent = { type: 'sandbox.added', id: `s${emitted}`, summary: summary(`s${emitted}`, big) };
        emitted++;
        for (const l of [...listeners]) l(e);
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(active()).toBe(0);
    expect(emitted).toBeLessThan(4000);
    stream.resume();
    const err = await failed;
    expect(err.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(err.details).toMatch(/not reading/);
    expect(received).toBeLessThan(emitted);
  });
});
