/**
 * The read path answers from views and wire bytes built once per saved version (pods/read-index.ts, the CRI
 * server's wire caches) and a long container list leaves exits to the exit poll: a read after a change must still
 * show the change. Over the touch-point fakes, through the CRI adapters and the cached serialisers a client gets.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { podSandboxStatus } from '../../electron/cri/server/sandbox-status';
import { listPodSandbox } from '../../electron/cri/server/sandbox-list';
import { containerStatus } from '../../electron/cri/server/container-status';
import { listContainers } from '../../electron/cri/server/container-list';
import {
  serializeContainerStatusResponse,
  serializeListContainersResponse,
  serializeListPodSandboxResponse,
  serializePodSandboxStatusResponse,
} from '../../electron/cri/server/wire-cache';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

let t: TestEngine;
const IMAGE = 'podscope.test/busybox:1';

beforeEach(async () => {
  t = await createTestEngine({ tmpPrefix: 'podscope-pfl-fresh-' });
  await t.loadImage(IMAGE, { config: { Cmd: ['sh'] } });
});

afterEach(async () => {
  await t.close();
});

const pod = async (i: number) =>
  (await t.engine.run({ config: { metadata: { name: `p${i}`, namespace: 'fresh', uid: `u${i}` }, labels: { pod: `p${i}` } } })).id;

/** what a client decodes from the bytes the server sends (the cached serialisers, as on the socket) */
const wireStatus = async (id: string) =>
  pb.PodSandboxStatusResponse.decode(
    serializePodSandboxStatusResponse(await podSandboxStatus(t.engine, { podSandboxId: id, verbose: true })),
  );
const wireList = async () =>
  pb.ListPodSandboxResponse.decode(serializeListPodSandboxResponse(await listPodSandbox(t.engine, { filter: undefined })));

const wireContainerStatus = async (id: string, verbose = false) =>
  pb.ContainerStatusResponse.decode(serializeContainerStatusResponse(await containerStatus(t.engine, { containerId: id, verbose })));

async function runningContainer(podId: string, name = 'main'): Promise<string> {
  const { id } = await t.engine.createContainer({
    podSandboxId: podId,
    config: { metadata: { name }, image: { image: IMAGE }, command: ['sleep', 'inf'] },
  });
  await t.engine.startContainer(id);
  return id;
}

describe('reads after a change', () => {
  it('PodSandboxStatus and ListPodSandbox show a stop and a pause exit on the next read, verbose info included', async () => {
    const [a, b] = [await pod(1), await pod(2)];
    // read twice: the second answer comes from the views and bytes cached by the first
    for (let i = 0; i < 2; i++) {
      expect((await wireStatus(a)).status?.state).toBe(pb.PodSandboxState.SANDBOX_READY);
      expect((await wireList()).items.map((p) => p.state)).toEqual([pb.PodSandboxState.SANDBOX_READY, pb.PodSandboxState.SANDBOX_READY]);
    }
    await t.engine.stop(a);
    const stopped = await wireStatus(a);
    expect(stopped.status?.state).toBe(pb.PodSandboxState.SANDBOX_NOTREADY);
    expect(JSON.parse(stopped.info.info!)).toMatchObject({
      processStatus: 'stopped',
      netNamespaceClosed: true,
      podscope: { state: 'SANDBOX_NOTREADY' },
    });
    expect(Object.fromEntries((await wireList()).items.map((p) => [p.id, p.state]))).toEqual({
      [a]: pb.PodSandboxState.SANDBOX_NOTREADY,
      [b]: pb.PodSandboxState.SANDBOX_READY,
    });
    // a pause that dies on its own is noticed by the next status, which saves and re-reads its view
    t.runtime.exit(b);
    expect((await wireStatus(b)).status?.state).toBe(pb.PodSandboxState.SANDBOX_NOTREADY);
    expect((await wireList()).items.every((p) => p.state === pb.PodSandboxState.SANDBOX_NOTREADY)).toBe(true);
    await t.engine.remove(a);
    expect((await wireList()).items.map((p) => p.id)).toEqual([b]);
  });

  it('ContainerStatus and a short ListContainers show an exit on the next read, without waiting for the exit poll', async () => {
    const p = await pod(1);
    const id = await runningContainer(p);
    const state = async () => (await wireContainerStatus(id)).status?.state;
    const listed = async (filter?: Partial<pb.ContainerFilter>) =>
      pb.ListContainersResponse.decode(
        serializeListContainersResponse(await listContainers(t.engine, { filter: filter && pb.ContainerFilter.fromPartial(filter) })),
      ).containers.map((c) => c.state);
    // read twice: the second list answers from the wire form and bytes cached by the first
    for (let i = 0; i < 2; i++) {
      expect(await state()).toBe(pb.ContainerState.CONTAINER_RUNNING);
      expect(await listed()).toEqual([pb.ContainerState.CONTAINER_RUNNING]);
    }
    t.containerRuntime.exit(id, 3);
    expect(await listed({ podSandboxId: p })).toEqual([pb.ContainerState.CONTAINER_EXITED]);
    expect(await listed({ state: { state: pb.ContainerState.CONTAINER_RUNNING } })).toEqual([]);
    expect(await listed()).toEqual([pb.ContainerState.CONTAINER_EXITED]);
    expect(await state()).toBe(pb.ContainerState.CONTAINER_EXITED);
  });

  it('ContainerStatus, verbose or not, shows an UpdateContainerResources on the next read (its view and bytes are per save)', async () => {
    const id = await runningContainer(await pod(1));
    const cpuShares = async (verbose: boolean) => {
      const res = await wireContainerStatus(id, verbose);
      const fromInfo = verbose
        ? (JSON.parse(res.info.info!) as { config: { linux?: { resources?: { cpu_shares?: number } } } })
        : undefined;
      return [res.status?.resources?.linux?.cpuShares, fromInfo?.config.linux?.resources?.cpu_shares];
    };
    // read twice: the second answer comes from the view and bytes cached by the first
    const before = await cpuShares(true);
    expect(await cpuShares(true)).toEqual(before);
    expect(before).not.toEqual(['512', 512]);
    await t.engine.updateContainerResources(id, { cpu_shares: 512 });
    expect(await cpuShares(false)).toEqual(['512', undefined]);
    expect(await cpuShares(true)).toEqual(['512', 512]);
  });

  it('an unfiltered ListContainers and ListPodSandbox, read twice after every change, show a create, start, stop, remove and a new pod', async () => {
    const p = await pod(1);
    const unfiltered = async () =>
      pb.ListContainersResponse.decode(
        serializeListContainersResponse(await listContainers(t.engine, { filter: undefined })),
      ).containers.map((c) => [c.id, c.state]);
    // each answer twice: the second one comes from the last reply's bytes when nothing changed
    const twice = async () => {
      const first = await unfiltered();
      expect(await unfiltered()).toEqual(first);
      return first;
    };
    const { id: c1 } = await t.engine.createContainer({
      podSandboxId: p,
      config: { metadata: { name: 'one' }, image: { image: IMAGE }, command: ['sleep', 'inf'] },
    });
    expect(await twice()).toEqual([[c1, pb.ContainerState.CONTAINER_CREATED]]);
    await t.engine.startContainer(c1);
    expect(await twice()).toEqual([[c1, pb.ContainerState.CONTAINER_RUNNING]]);
    const c2 = await runningContainer(p, 'two');
    expect(Object.fromEntries(await twice())).toEqual({
      [c1]: pb.ContainerState.CONTAINER_RUNNING,
      [c2]: pb.ContainerState.CONTAINER_RUNNING,
    });
    await t.engine.stopContainer(c1, 1);
    expect(Object.fromEntries(await twice())).toEqual({
      [c1]: pb.ContainerState.CONTAINER_EXITED,
      [c2]: pb.ContainerState.CONTAINER_RUNNING,
    });
    await t.engine.removeContainer(c1);
    expect(await twice()).toEqual([[c2, pb.ContainerState.CONTAINER_RUNNING]]);

    expect((await wireList()).items.map((s) => s.id)).toEqual([p]);
    expect((await wireList()).items.map((s) => s.id)).toEqual([p]);
    const q = await pod(2);
    expect((await wireList()).items.map((s) => s.id).sort()).toEqual([p, q].sort());
    await t.engine.stop(q);
    expect(Object.fromEntries((await wireList()).items.map((s) => [s.id, s.state]))).toEqual({
      [p]: pb.PodSandboxState.SANDBOX_READY,
      [q]: pb.PodSandboxState.SANDBOX_NOTREADY,
    });
    await t.engine.stop(p);
    expect((await twice()).map(([, state]) => state)).toEqual([pb.ContainerState.CONTAINER_EXITED]);
  });

  it('a ListContainers of more containers than it checks shows an exit once the exit poll has seen it', async () => {
    const p = await pod(1);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await runningContainer(p, `c${i}`));
    const victim = ids[17]!;
    t.containerRuntime.exit(victim, 0);
    // the long list does not look at exits itself; the exit poll (every second) does
    await expect
      .poll(async () => (await listContainers(t.engine, { filter: undefined })).containers.find((c) => c.id === victim)?.state, {
        timeout: 5000,
        interval: 100,
      })
      .toBe(pb.ContainerState.CONTAINER_EXITED);
  });
});
