/**
 * The read RPCs' cached serialisers must put on the wire exactly the bytes the generated encoder would, for every
 * shape of response (empty, one pod, many, a verbose status with UTF-8, a status without network), and must not
 * serve stale bytes when the adapter hands out a new object for a changed sandbox.
 */
import { describe, expect, it } from 'vitest';
import {
  ContainerState,
  ContainerStatus,
  ContainerStatusResponse,
  ListContainersResponse,
  ListPodSandboxResponse,
  PodSandboxState,
  PodSandboxStatusResponse,
  type PodSandbox,
  type PodSandboxStatus,
} from '../../electron/cri/generated/runtime_v1';
import {
  serializeContainerStatusResponse,
  serializeListContainersResponse,
  serializeListPodSandboxResponse,
  serializePodSandboxStatusResponse,
} from '../../electron/cri/server/wire-cache';

const pod = (i: number, extra = ''): PodSandbox => ({
  id: `${i.toString(16).padStart(64, '0')}`,
  metadata: { name: `pod-${i}${extra}`, uid: `uid-${i}`, namespace: 'ns-ü', attempt: i % 3 },
  state: i % 2 ? PodSandboxState.SANDBOX_READY : PodSandboxState.SANDBOX_NOTREADY,
  createdAt: `${1_700_000_000_000_000_000 + i}`,
  labels: { app: `a${i}`, long: 'x'.repeat(200) },
  annotations: { note: 'é'.repeat(i) },
  runtimeHandler: '',
});

const status = (ip: string): PodSandboxStatus =>
  ({
    id: 'f'.repeat(64),
    metadata: { name: 'n', uid: 'u', namespace: 'ns', attempt: 0 },
    state: PodSandboxState.SANDBOX_READY,
    createdAt: '1700000000000000000',
    network: ip ? { ip, additionalIps: [{ ip: 'fd00::2' }] } : undefined,
    linux: undefined,
    labels: { a: 'b' },
    annotations: {},
    runtimeHandler: 'runc',
    containersStatistics: undefined,
    sandboxStatistics: undefined,
  }) as unknown as PodSandboxStatus;

describe('cached CRI read serialisers', () => {
  it('ListContainers bytes equal the generated encoder for 0, 1 and 300 containers', () => {
    for (const n of [0, 1, 300]) {
      const res = {
        containers: Array.from({ length: n }, (_, i) => ({
          id: `${i.toString(16).padStart(64, 'c')}`,
          podSandboxId: `${i.toString(16).padStart(64, '0')}`,
          metadata: { name: `c-${i}`, attempt: i % 2 },
          image: { image: 'busybox', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' },
          imageRef: 'sha256:abc',
          state: i % 2 ? ContainerState.CONTAINER_RUNNING : ContainerState.CONTAINER_EXITED,
          createdAt: `${1_700_000_000_000_000_000 + i}`,
          labels: { app: `a${i}`, long: 'x'.repeat(200) },
          annotations: { note: 'é'.repeat(i) },
          imageId: 'sha256:abc',
        })),
      };
      // Buffer#equals as below: toEqual walks a buffer byte by byte as an object (~1 s for the 300 containers' 140 kB)
      expect(serializeListContainersResponse(res).equals(Buffer.from(ListContainersResponse.encode(res).finish()))).toBe(true);
    }
  });

  it('ListPodSandbox bytes equal the generated encoder for 0, 1 and 300 pods (multi-byte lengths included)', () => {
    for (const n of [0, 1, 300]) {
      const res = { items: Array.from({ length: n }, (_, i) => pod(i)) };
      expect(serializeListPodSandboxResponse(res).equals(Buffer.from(ListPodSandboxResponse.encode(res).finish()))).toBe(true);
      // the second time comes from the cache and must still be the same bytes
      expect(serializeListPodSandboxResponse(res).equals(Buffer.from(ListPodSandboxResponse.encode(res).finish()))).toBe(true);
      expect(ListPodSandboxResponse.decode(serializeListPodSandboxResponse(res))).toEqual(res);
    }
  });

  it('a new object for a changed pod is encoded afresh (the cache is keyed by object, not by id)', () => {
    const before = pod(1);
    serializeListPodSandboxResponse({ items: [before] });
    const after = { ...before, state: PodSandboxState.SANDBOX_NOTREADY };
    expect(ListPodSandboxResponse.decode(serializeListPodSandboxResponse({ items: [after] })).items[0]!.state).toBe(
      PodSandboxState.SANDBOX_NOTREADY,
    );
  });

  it('a list of the same pod objects is the last reply; a changed, added, removed or reordered pod is encoded afresh', () => {
    const items = Array.from({ length: 50 }, (_, i) => pod(i, '-last'));
    const encoded = (list: PodSandbox[]) => Buffer.from(ListPodSandboxResponse.encode({ items: list }).finish());
    const first = serializeListPodSandboxResponse({ items });
    // a new array of the same objects (each list call builds its own array) is served from the last reply
    expect(serializeListPodSandboxResponse({ items: [...items] })).toBe(first);
    const changed = [...items];
    changed[7] = {
      ...items[7]!,
      state: PodSandboxState.SANDBOX_NOTREADY === items[7]!.state ? PodSandboxState.SANDBOX_READY : PodSandboxState.SANDBOX_NOTREADY,
    };
    const cases: PodSandbox[][] = [changed, [...items, pod(99, '-last')], items.slice(1), [...items].reverse(), [], items];
    for (const list of cases) {
      const got = serializeListPodSandboxResponse({ items: list });
      expect(got.equals(encoded(list))).toBe(true);
      expect(serializeListPodSandboxResponse({ items: [...list] }).equals(encoded(list))).toBe(true);
    }
  });

  it('a ListContainers of the same container objects is the last reply; a container whose state changed is not', () => {
    const container = (i: number, state: ContainerState) => ({
      id: `${i.toString(16).padStart(64, 'd')}`,
      podSandboxId: `${i.toString(16).padStart(64, '0')}`,
      metadata: { name: `c-${i}`, attempt: 0 },
      image: { image: 'busybox', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' },
      imageRef: 'sha256:abc',
      state,
      createdAt: `${1_700_000_000_000_000_000 + i}`,
      labels: { app: `a${i}` },
      annotations: {},
      imageId: 'sha256:abc',
    });
    const containers = Array.from({ length: 20 }, (_, i) => container(i, ContainerState.CONTAINER_RUNNING));
    const first = serializeListContainersResponse({ containers });
    expect(serializeListContainersResponse({ containers: [...containers] })).toBe(first);
    const exited = containers.map((c, i) => (i === 3 ? container(3, ContainerState.CONTAINER_EXITED) : c));
    const decoded = ListContainersResponse.decode(serializeListContainersResponse({ containers: exited }));
    expect(decoded.containers[3]!.state).toBe(ContainerState.CONTAINER_EXITED);
    expect(decoded.containers.filter((c) => c.state === ContainerState.CONTAINER_EXITED)).toHaveLength(1);
  });

  it('PodSandboxStatus bytes equal the generated encoder, verbose or not, with and without a network', () => {
    for (const ip of ['10.1.2.3', '']) {
      const s = status(ip);
      const infos: Array<Record<string, string>> = [{}, { info: JSON.stringify({ pid: 1, note: 'ünïcode', big: 'y'.repeat(5000) }) }];
      for (const info of infos) {
        for (const timestamp of ['0', '1700000000123456789']) {
          const res = { status: s, info, timestamp };
          const want = Buffer.from(PodSandboxStatusResponse.encode(res).finish());
          expect(serializePodSandboxStatusResponse(res).equals(want)).toBe(true);
          expect(serializePodSandboxStatusResponse(res).equals(want)).toBe(true);
        }
      }
    }
    const res = { status: undefined, info: {}, timestamp: '5' };
    expect(serializePodSandboxStatusResponse(res).equals(Buffer.from(PodSandboxStatusResponse.encode(res).finish()))).toBe(true);
  });

  it('a verbose PodSandboxStatus whose info changed on the same status object is the new info, not the cached bytes', () => {
    const s = status('10.1.2.3');
    const docs = [{ info: JSON.stringify({ pid: 1 }) }, { info: JSON.stringify({ pid: 2, note: 'ü' }) }, { info: 'x', other: 'y' }];
    for (const info of [...docs, docs[0]!, {}, docs[1]!]) {
      const res = { status: s, info, timestamp: '1700000000123456789' };
      const got = serializePodSandboxStatusResponse(res);
      expect(got.equals(Buffer.from(PodSandboxStatusResponse.encode(res).finish()))).toBe(true);
      expect(PodSandboxStatusResponse.decode(got).info).toEqual(info);
    }
  });

  it('ContainerStatus bytes equal the generated encoder, verbose or not, for a running and an exited container', () => {
    for (const exited of [false, true]) {
      const st = ContainerStatus.fromPartial({
        id: 'c'.repeat(64),
        metadata: { name: 'main-ü', attempt: 1 },
        state: exited ? ContainerState.CONTAINER_EXITED : ContainerState.CONTAINER_RUNNING,
        createdAt: '1700000000000000000',
        startedAt: '1700000000100000000',
        finishedAt: exited ? '1700000000200000000' : '0',
        exitCode: exited ? 137 : 0,
        image: { image: 'podscope.test/busybox:1' },
        imageRef: 'sha256:' + 'a'.repeat(64),
        reason: exited ? 'OOMKilled' : '',
        labels: { app: 'x'.repeat(300) },
        mounts: [{ containerPath: '/data', hostPath: '/srv/data', readonly: true }],
        logPath: '/var/log/pods/ns_p_u/main/1.log',
        user: { linux: { uid: '0', gid: '0', supplementalGroups: ['0', '10'] } },
      });
      const infos: Array<Record<string, string>> = [{}, { info: JSON.stringify({ pid: 42, runtimeSpec: { note: 'é'.repeat(3000) } }) }];
      for (const info of infos) {
        const res = { status: st, info };
        const want = Buffer.from(ContainerStatusResponse.encode(res).finish());
        // twice: the second call serves the status bytes cached by the first
        expect(serializeContainerStatusResponse(res).equals(want)).toBe(true);
        expect(serializeContainerStatusResponse(res).equals(want)).toBe(true);
      }
    }
    const res = { status: undefined, info: {} };
    expect(serializeContainerStatusResponse(res).equals(Buffer.from(ContainerStatusResponse.encode(res).finish()))).toBe(true);
  });
});
