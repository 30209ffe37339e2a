/**
 * GetContainerEvents subscription lifecycle: a client that cancels while the server is still listing sandboxes
 * must not leave its engine subscription behind, and a client that stops reading gets RESOURCE_EXHAUSTED (with the
 * subscription dropped) instead of an ever-growing server-side queue.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { status as Code, type ServiceError } from '@grpc/grpc-js';
import type { SandboxSummary } from '../../shared/domain/sandbox';
import type { SandboxEventListener } from '../../electron/engine/service/engine-api';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import type * as pb from '../../electron/cri/generated/runtime_v1';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { rawClient, tempDir } from './helpers/grpc';

type Engine = TestEngine['engine'];

/** The real engine (touch points faked) with its subscriptions counted and its listeners reachable. */
async function instrumented(): Promise<{ engine: Engine; fakes: TestEngine; active: () => number; listeners: Set<SandboxEventListener> }> {
  const fakes = await createTestEngine();
  cleanups.push(() => fakes.close());
  const engine = fakes.engine;
  const listeners = new Set<SandboxEventListener>();
  const subscribe = engine.subscribe.bind(engine);
  engine.subscribe = (l) => {
    listeners.add(l);
    const off = subscribe(l);
    return () => {
      listeners.delete(l);
      off();
    };
  };
  return { engine, fakes, active: () => listeners.size, listeners };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(
  engine: Engine,
  extra: { eventsHighWaterMark?: number } = {},
): Promise<{ server: CriServer; client: pb.RuntimeServiceClient }> {
  const tmp = tempDir('podscope-cri-events-');
  const server = await startCriServer({ engine, socketPath: join(tmp.dir, 'cri.sock'), ...extra });
  const client = rawClient(server.socketPath);
  cleanups.push(
    () => tmp.cleanup(),
    () => server.close(),
    () => client.close(),
  );
  return { server, client };
}

describe('GetContainerEvents subscription lifecycle', () => {
  it('a cancel during the initial (slow) list unsubscribes once the list returns', async () => {
    const { engine, active } = await instrumented();
    let release!: () => void;
    let listCalls = 0;
    // list() is held open by the test (replaced on this engine instance): the point is the CRI stream's timing, and
    // no touch point can hold it deterministically (the liveness probe is skipped while the background poll runs)
    engine.list = () => {
      listCalls++;
      return new Promise<SandboxSummary[]>((r) => {
        release = () => r([]);
      });
    };
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
    const { engine, active } = await instrumented();
    let fail!: () => void;
    // held open, then failed, by the test (see above)
    engine.list = () =>
      new Promise<SandboxSummary[]>((_r, reject) => {
        fail = () => reject(new Error('list broke'));
      });
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
    const { engine, fakes, active } = await instrumented();
    // the stream starts by listing; list checks each running pause pid, and that read fails
    await engine.run({ config: { metadata: { name: 'running', namespace: 'ns', uid: 'u' } } });
    fakes.runtime.probeError = new Error('disk on fire');
    const { client } = await serve(engine);
    const stream = client.getContainerEvents({});
    stream.on('data', () => undefined);
    const err = await new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    expect(err.code).toBe(Code.UNKNOWN);
    expect(err.details).toBe('disk on fire');
    expect(active()).toBe(0);
  });

  it('a client that stops reading gets RESOURCE_EXHAUSTED and its subscription is dropped', async () => {
    const { engine, fakes, active } = await instrumented();
    const { client } = await serve(engine, { eventsHighWaterMark: 8 });
    const stream = client.getContainerEvents({});
    let received = 0;
    stream.on('data', () => {
      received++;
    });
    const failed = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    await expect.poll(() => active()).toBe(1);
    stream.pause(); // stop reading: HTTP/2 flow control fills up, then the server's own queue
    // every run makes the engine emit sandbox.added and sandbox.changed, each carrying the ~8 KiB label
    const big = { note: 'x'.repeat(8192) };
    const emittedSoFar = () => fakes.events.filter((e) => e.type !== 'sandbox.progress').length;
    // 2000 runs × 2 events × ~8 KiB = ~32 MiB if nothing pushed back
    for (let i = 0; i < 2000 && active() > 0; i++) {
      await engine.run({ config: { metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}` }, labels: big } });
      if (i % 25 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(active()).toBe(0);
    const emitted = emittedSoFar();
    expect(emitted).toBeLessThan(4000);
    stream.resume();
    const err = await failed;
    expect(err.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(err.details).toMatch(/not reading/);
    expect(received).toBeLessThan(emitted);
  });
});
