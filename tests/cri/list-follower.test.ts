/**
 * The CRI list follower against the real CRI server over the test engine (real gRPC on a unix socket), counting
 * every RPC the server receives: re-list mode costs one ListPodSandbox and one ListContainers per period and no
 * PodSandboxStatus while nothing changes; a change is pushed as a delta holding only that row, with one status for
 * its network facts. Event mode (the registry, since the server streams GetContainerEvents) pushes changes with no
 * list and no status at all, and the router's list is answered from the follower without an RPC. Network facts are
 * read only for the rows a viewer shows, once each; a runtime without ListContainers still has its pods listed.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client/cri-endpoint-api';
import { createEndpointRegistry, type CriEndpointRegistry } from '../../electron/endpoints';
import { createPodFollower, type PodFollower } from '../../electron/endpoints/pod-follower';
import type { EndpointDelta } from '../../shared/domain/endpoints';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { tempDir } from './helpers/grpc';
import { startSyntheticCri } from '../../testkit/synthetic-cri';
import { until } from '../../testkit/until';

let fakes: TestEngine;
let server: CriServer;
let tmp: ReturnType<typeof tempDir>;
const calls: string[] = [];
const since = (mark: number) => {
  const by: Record<string, number> = {};
  for (const m of calls.slice(mark)) by[m] = (by[m] ?? 0) + 1;
  return by;
};
const pods = (n: number, prefix: string) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      fakes.engine.run({ config: { metadata: { name: `${prefix}${i}`, namespace: 'f', uid: `${prefix}u${i}` } } }),
    ),
  );

beforeAll(async () => {
  tmp = tempDir('psp-follower-');
  fakes = await createTestEngine({ tmpPrefix: 'psp-follower-engine-' });
  server = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock'), onCall: (m) => calls.push(m) });
  await pods(40, 'p');
});
afterAll(async () => {
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

/** resolves with the first delta from index `from` on that `ok` accepts */
function deltaWhere(deltas: EndpointDelta[], ok: (d: EndpointDelta) => boolean, from = 0): Promise<EndpointDelta> {
  return new Promise((resolve) => {
    const check = () => {
      const d = deltas.slice(from).find(ok);
      if (d) resolve(d);
      else setTimeout(check, 20);
    };
    check();
  });
}

describe('re-list mode (a runtime without GetContainerEvents)', () => {
  let api: CriEndpointApi;
  let follower: PodFollower;
  const deltas: EndpointDelta[] = [];
  afterAll(() => {
    follower?.close();
    api?.close();
  });

  it('lists once, fills the IP of every pod a viewer shows with one status each, then idles at one ListPodSandbox + one ListContainers per period', async () => {
    api = createCriEndpointApi(server.socketPath);
    await api.connect();
    const start = calls.length;
    follower = createPodFollower({ source: api, events: false, relistMs: 150, onDelta: (d) => deltas.push(d) });
    const first = await follower.pods();
    expect(first).toHaveLength(40);
    // a window showing all 40 rows
    follower.showing(
      'window-1',
      first.map((p) => p.id),
    );
    // the network facts come in after the list, in batches
    const ips = new Map((await fakes.engine.list()).map((p) => [p.id, p.ip]));
    await deltaWhere(
      deltas,
      () =>
        follower.healthy &&
        [...ips.keys()].every((id) => deltas.some((d) => d.pods?.upserts.some((p) => p.id === id && p.ip === ips.get(id)))),
    );
    expect((await follower.pods()).every((p) => p.ip !== '' && p.ip === ips.get(p.id))).toBe(true);
    expect(since(start).podSandboxStatus).toBe(40);

    // idle: several periods pass; each costs exactly the two list calls, nothing else, and pushes nothing
    const idle = calls.length;
    const pushed = deltas.length;
    await new Promise((r) => setTimeout(r, 1000));
    const by = since(idle);
    expect(Object.keys(by).sort()).toEqual(['listContainers', 'listPodSandbox']);
    expect(by.listPodSandbox).toBe(by.listContainers);
    // at most one re-list per period (1000 / 150 ⇒ ≤ 7)
    expect(by.listPodSandbox).toBeLessThanOrEqual(7);
    expect(deltas.length).toBe(pushed);
  });

  it('pushes a stopped pod as a one-row delta and reads only its status; a removed pod as its id', async () => {
    const [victim] = await fakes.engine.list();
    const mark = calls.length;
    const pushed = deltas.length;
    await fakes.engine.stop(victim!.id);
    const d = await deltaWhere(deltas, (x) => !!x.pods?.upserts.some((p) => p.id === victim!.id), pushed);
    expect(d.pods!.upserts.map((p) => [p.id, p.state])).toEqual([[victim!.id, 'SANDBOX_NOTREADY']]);
    expect(d.pods!.removed).toEqual([]);
    await new Promise((r) => setTimeout(r, 400));
    expect(calls.slice(mark).filter((m) => m === 'podSandboxStatus')).toHaveLength(1);

    const before = deltas.length;
    await fakes.engine.remove(victim!.id);
    const r = await deltaWhere(deltas, (x) => (x.pods?.removed.length ?? 0) > 0, before);
    expect(r.pods).toEqual({ upserts: [], removed: [victim!.id] });
    expect((await follower.pods()).some((p) => p.id === victim!.id)).toBe(false);
  });

  it('pushes a container that exited with its exit code (one ContainerStatus), which ListContainers does not carry', async () => {
    const [host] = (await fakes.engine.list()).filter((p) => p.state === 'SANDBOX_READY');
    await fakes.loadImage('podscope.test/busybox:1');
    const { id } = await fakes.engine.createContainer({
      podSandboxId: host!.id,
      config: { metadata: { name: 'job' }, image: { image: 'podscope.test/busybox:1' }, command: ['false'] },
    });
    await fakes.engine.startContainer(id);
    const mark = calls.length;
    const from = deltas.length;
    fakes.containerRuntime.exit(id, 3);
    await fakes.engine.listContainers(); // the engine notices the exit
    const d = await deltaWhere(deltas, (x) => !!x.containers?.upserts.some((c) => c.id === id && c.exitCode === 3), from);
    expect(d.containers!.upserts.find((c) => c.id === id)!.state).toBe('CONTAINER_EXITED');
    expect((await follower.containers()).find((c) => c.id === id)!.exitCode).toBe(3);
    expect(calls.slice(mark).filter((m) => m === 'containerStatus')).toHaveLength(1);
  });
});

describe('event mode, through the registry (the server streams GetContainerEvents)', () => {
  let registry: CriEndpointRegistry;
  afterAll(() => registry?.close());

  it('pushes a new pod from its event with its IP, and serves the list without a single RPC', async () => {
    registry = createEndpointRegistry({ local: fakes.engine });
    const deltas: EndpointDelta[] = [];
    registry.subscribeDeltas((_id, d) => deltas.push(d));
    const ep = await registry.add({ address: server.socketPath });
    const api = registry.api(ep.id);
    const listed = await api.list();
    expect(listed).toHaveLength((await fakes.engine.list()).length);

    // let the first list's status backfill finish, then watch a quiet endpoint
    await new Promise((r) => setTimeout(r, 800));
    const mark = calls.length;
    const { id } = (await pods(1, 'ev'))[0]!;
    const d = await deltaWhere(deltas, (x) => !!x.pods?.upserts.some((p) => p.id === id && p.ip !== ''));
    expect(d.pods!.upserts.find((p) => p.id === id)!.ip).toBe((await fakes.engine.status(id)).ip);
    expect(await api.list()).toHaveLength(listed.length + 1);
    await new Promise((r) => setTimeout(r, 1000));
    const by = since(mark);
    // no list, no status: the event carried the row; at most a liveness ping
    expect(by.listPodSandbox ?? 0).toBe(0);
    expect(by.podSandboxStatus ?? 0).toBe(0);
    expect(Object.keys(by).filter((m) => m !== 'version' && m !== 'runPodSandbox')).toEqual([]);
  });
});

describe('a runtime without events that exits', () => {
  it('is pushed as lost from the dropped connection, with no re-list or ping due for a minute', async () => {
    const dir = tempDir('psp-follower-synth-');
    const synth = await startSyntheticCri({ socketPath: join(dir.dir, 'cri.sock'), pods: 5, events: false });
    // nothing timer-driven can notice within the test: only the connection watch can
    const registry = createEndpointRegistry({ local: fakes.engine, relistMs: 60_000, livenessMs: 60_000, watchIntervalMs: 60_000 });
    try {
      const ep = await registry.add({ address: synth.socketPath });
      expect(ep.capabilities.events).toBe(false);
      expect(await registry.api(ep.id).list()).toHaveLength(5);
      const lost = new Promise<void>((resolve) => {
        registry.onChange((list) => {
          if (list.some((e) => e.id === ep.id && !e.connected)) resolve();
        });
      });
      await synth.close();
      await lost;
    } finally {
      registry.close();
      await synth.close();
      dir.cleanup();
    }
  });
});

describe('a big runtime: statuses only for the rows a viewer shows', () => {
  it('reads no status for a list nobody shows, one per shown row, none again for rows already read, none while idle', async () => {
    const dir = tempDir('psp-follower-big-');
    const synth = await startSyntheticCri({ socketPath: join(dir.dir, 'cri.sock'), pods: 3000, events: false });
    const big = createCriEndpointApi(synth.socketPath);
    const deltas: EndpointDelta[] = [];
    const f = createPodFollower({ source: big, events: false, relistMs: 150, onDelta: (d) => deltas.push(d) });
    const statuses = () => synth.counts().PodSandboxStatus ?? 0;
    try {
      const rows = await f.pods();
      expect(rows).toHaveLength(3000);
      // three re-lists with nobody looking: still no status read
      const firstLists = synth.counts().ListPodSandbox!;
      await until(() => synth.counts().ListPodSandbox! >= firstLists + 3, { what: 'three re-lists', timeout: 20_000 });
      expect(statuses()).toBe(0);

      const screen = rows.slice(100, 140).map((p) => p.id);
      f.showing('window-1', screen);
      const ipOf = new Map(synth.pods.map((p) => [p.id, p.ip]));
      await deltaWhere(deltas, () =>
        screen.every((id) => deltas.some((d) => d.pods?.upserts.some((p) => p.id === id && p.ip === ipOf.get(id)))),
      );
      expect(statuses()).toBe(40);

      // the same rows again, then a scroll by half a screen: only the 20 new rows are asked about
      f.showing('window-1', screen);
      f.showing(
        'window-1',
        rows.slice(120, 160).map((p) => p.id),
      );
      // the 20 new rows are read (a wait on that, not a sleep: a busy machine reads them later); the idle second
      // below proves that no more than those come
      await until(() => statuses() >= 60, { what: 'status reads for the 20 newly shown rows', timeout: 20_000 });
      expect(statuses()).toBe(60);

      // idle with rows shown: re-lists only
      const before = synth.counts();
      await new Promise((r) => setTimeout(r, 1000));
      const after = synth.counts();
      expect(after.PodSandboxStatus ?? 0).toBe(before.PodSandboxStatus ?? 0);
      expect(after.ListPodSandbox! - before.ListPodSandbox!).toBeGreaterThan(0);

      // a shown row whose state changes is read again (a stopped pod's network is gone); a hidden one is not
      synth.flip(rows[130]!.id);
      synth.flip(rows[2000]!.id);
      await until(() => statuses() >= 61, { what: 'a status read of the shown row whose state changed', timeout: 20_000 });
      // a few more re-lists: the hidden row's change must still not be read
      const lists = synth.counts().ListPodSandbox!;
      await until(() => synth.counts().ListPodSandbox! >= lists + 3, { what: 'three more re-lists', timeout: 20_000 });
      expect(statuses()).toBe(61);
    } finally {
      f.close();
      big.close();
      await synth.close();
      dir.cleanup();
    }
  });
});

describe('a runtime without ListContainers', () => {
  it('lists its pods, marks its containers unavailable, and stops asking for them', async () => {
    const dir = tempDir('psp-follower-nocontainers-');
    const synth = await startSyntheticCri({ socketPath: join(dir.dir, 'cri.sock'), pods: 5, events: false, listContainers: false });
    const registry = createEndpointRegistry({ local: fakes.engine, relistMs: 150 });
    try {
      const ep = await registry.add({ address: synth.socketPath });
      const api = registry.api(ep.id) as CriEndpointApi;
      expect(await api.list()).toHaveLength(5);
      await expect(api.listContainers()).rejects.toMatchObject({ code: 'Unimplemented' });
      const view = (await registry.list()).find((e) => e.id === ep.id)!;
      expect(view.capabilities.containers).toBe(false);
      // several re-list periods: pods are listed each time, ListContainers was asked once
      const asked = synth.counts().ListContainers;
      await new Promise((r) => setTimeout(r, 800));
      expect(synth.counts().ListPodSandbox).toBeGreaterThan(2);
      expect(synth.counts().ListContainers).toBe(asked);
      expect(asked).toBe(1);
    } finally {
      registry.close();
      await synth.close();
      dir.cleanup();
    }
  });
});
