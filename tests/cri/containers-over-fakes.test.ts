/**
 * The container RPCs through a real unix socket against the real engine over the OS touch-point fakes: codes
 * (NotFound, InvalidArgument, FailedPrecondition), prefix ids, verbose status JSON, ExecSync bytes and exit code,
 * stats, and the container events on GetContainerEvents.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Code } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { codeOf, podConfig, rawClient, rpc, tempDir } from './helpers/grpc';
import { createCriEndpointApi } from '../../electron/cri/client';

let fakes: TestEngine;
let server: CriServer;
let client: pb.RuntimeServiceClient;
let tmp: ReturnType<typeof tempDir>;
const IMAGE = 'podscope.test/busybox:1';

beforeAll(async () => {
  tmp = tempDir('podscope-c1-cri-');
  fakes = await createTestEngine({ tmpPrefix: 'podscope-c1-fakes-' });
  await fakes.loadImage(IMAGE, { config: { Cmd: ['sh'], StopSignal: 'SIGINT' } });
  server = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock') });
  client = rawClient(server.socketPath);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

const ctr = (name: string, extra: Partial<pb.ContainerConfig> = {}) =>
  pb.ContainerConfig.fromPartial({
    metadata: { name },
    image: { image: IMAGE },
    command: ['sleep', '100'],
    labels: { app: name },
    ...extra,
  });

describe('container RPCs', () => {
  it('CreateContainer answers NOT_FOUND for an unknown pod or image and INVALID_ARGUMENT without metadata', async () => {
    const pod = (await rpc(client, (c) => c.runPodSandbox, { config: podConfig('codes'), runtimeHandler: '' })).podSandboxId;
    expect(
      await codeOf(rpc(client, (c) => c.createContainer, { podSandboxId: 'ffffff', config: ctr('a'), sandboxConfig: undefined })),
    ).toBe(Code.NOT_FOUND);
    expect(
      await codeOf(
        rpc(client, (c) => c.createContainer, {
          podSandboxId: pod,
          config: ctr('a', { image: { image: 'nope', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' } }),
          sandboxConfig: undefined,
        }),
      ),
    ).toBe(Code.NOT_FOUND);
    expect(
      await codeOf(
        rpc(client, (c) => c.createContainer, { podSandboxId: pod, config: pb.ContainerConfig.fromPartial({}), sandboxConfig: undefined }),
      ),
    ).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(client, (c) => c.stopContainer, { containerId: 'nope', timeout: '0' }))).toBe(Code.NOT_FOUND);
    expect(await codeOf(rpc(client, (c) => c.removeContainer, { containerId: 'nope' }))).toBe(Code.OK);
  });

  it('create, start, list, status, exec, stats, stop, remove — with the events a kubelet would see', async () => {
    const stream = client.getContainerEvents({});
    const events: pb.ContainerEventResponse[] = [];
    stream.on('data', (e: pb.ContainerEventResponse) => events.push(e));
    stream.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const pod = (await rpc(client, (c) => c.runPodSandbox, { config: podConfig('life'), runtimeHandler: '' })).podSandboxId;
    const id = (
      await rpc(client, (c) => c.createContainer, { podSandboxId: pod.slice(0, 12), config: ctr('web'), sandboxConfig: undefined })
    ).containerId;
    await rpc(client, (c) => c.startContainer, { containerId: id.slice(0, 12) });
    expect(await codeOf(rpc(client, (c) => c.startContainer, { containerId: id }))).toBe(Code.FAILED_PRECONDITION);

    const list = await rpc(client, (c) => c.listContainers, {
      filter: pb.ContainerFilter.fromPartial({
        podSandboxId: pod,
        labelSelector: { app: 'web' },
        state: { state: pb.ContainerState.CONTAINER_RUNNING },
      }),
    });
    expect(list.containers.map((c) => [c.id, c.metadata?.name, c.state])).toEqual([[id, 'web', pb.ContainerState.CONTAINER_RUNNING]]);

    const st = await rpc(client, (c) => c.containerStatus, { containerId: id, verbose: true });
    expect(st.status).toMatchObject({
      id,
      state: pb.ContainerState.CONTAINER_RUNNING,
      exitCode: 0,
      user: { linux: { uid: '0', gid: '0' } },
    });
    const info = JSON.parse(st.info.info!) as {
      sandboxID: string;
      pid: number;
      runtimeSpec: { process: { args: string[] } };
      podscope: { stopSignal: string };
    };
    expect(info).toMatchObject({
      sandboxID: pod,
      runtimeSpec: { process: { args: ['sleep', '100'] } },
      podscope: { stopSignal: 'SIGINT' },
    });
    expect(info.pid).toBeGreaterThan(0);

    fakes.containerRuntime.execResult = { stdout: Buffer.from([0, 1, 2, 255]), stderr: Buffer.from('e'), exitCode: 5 };
    const ex = await rpc(client, (c) => c.execSync, { containerId: id, cmd: ['x'], timeout: '1' });
    expect([...ex.stdout]).toEqual([0, 1, 2, 255]);
    expect(ex).toMatchObject({ exitCode: 5 });

    const stats = await rpc(client, (c) => c.containerStats, { containerId: id });
    expect(stats.stats?.cpu?.usageCoreNanoSeconds?.value).toBe('1000000');
    expect((await rpc(client, (c) => c.listContainerStats, { filter: undefined })).stats.map((s) => s.attributes?.id)).toContain(id);

    await rpc(client, (c) => c.stopContainer, { containerId: id, timeout: '0' });
    const exited = await rpc(client, (c) => c.containerStatus, { containerId: id, verbose: false });
    expect(exited.status).toMatchObject({ state: pb.ContainerState.CONTAINER_EXITED, exitCode: 137, reason: 'Error' });
    expect(exited.info).toEqual({});
    await rpc(client, (c) => c.removeContainer, { containerId: id });
    expect(await codeOf(rpc(client, (c) => c.containerStatus, { containerId: id, verbose: false }))).toBe(Code.NOT_FOUND);

    await new Promise((r) => setTimeout(r, 200));
    stream.cancel();
    const T = pb.ContainerEventType;
    const mine = events.filter((e) => e.containerId === id);
    expect(mine.map((e) => e.containerEventType)).toEqual([
      T.CONTAINER_CREATED_EVENT,
      T.CONTAINER_STARTED_EVENT,
      T.CONTAINER_STOPPED_EVENT,
      T.CONTAINER_DELETED_EVENT,
    ]);
    expect(mine[0]!.podSandboxStatus?.id).toBe(pod);
    expect(mine[2]!.containersStatuses[0]).toMatchObject({ id, state: pb.ContainerState.CONTAINER_EXITED, exitCode: 137 });
  });

  it("a Podscope client reads a Podscope peer's create and start steps from the verbose status", async () => {
    const { id: podId } = await fakes.engine.run({ config: { metadata: { name: 'steps', namespace: 'c1', uid: 'u-steps' } } });
    const { id } = await fakes.engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'steps' }, image: { image: IMAGE }, command: ['sleep', '100'] },
    });
    await fakes.engine.startContainer(id);
    const api = createCriEndpointApi(`unix://${server.socketPath}`, { connectTimeoutMs: 2000 });
    try {
      const view = await api.containerStatus(id);
      expect(view.trace.map((e) => `${e.phase}:${e.step}`)).toEqual([
        'create:image.resolve',
        'create:rootfs.prepare',
        'create:user.resolve',
        'create:seccomp.load',
        'start:runtime.start',
      ]);
    } finally {
      api.close();
      await fakes.engine.remove(podId);
    }
  });
});
