/**
 * CRI round trip against the real engine (netns + Debian's bridge/host-local/portmap/bandwidth + runc) with its own
 * conf dir: bridge and subnets from the test kit's allocator (a lease), own IPAM dataDir, ipMasq false, temp dirs. The engine's
 * throw-away env removes every sandbox, the bridge, the portmap chains it added and the dirs, even on failure.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Code } from '@grpc/grpc-js';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { escapeRe } from '../../testkit/until';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { codeOf, podConfig, rawClient, rpc } from './helpers/grpc';

let env: RealEnv | undefined;
let server: CriServer | undefined;
let client: pb.RuntimeServiceClient | undefined;
let api: CriEndpointApi | undefined;
const hostPort = 30000 + Math.floor(Math.random() * 10000);

beforeAll(async () => {
  env = await createRealEnv({ tag: 'cri0' });
  const engine = await env.engine();
  server = await startCriServer({ engine, socketPath: join(env.dir, 'podscope.sock') });
  client = rawClient(server.socketPath);
  api = createCriEndpointApi(server.socketPath);
});

afterAll(async () => {
  api?.close();
  client?.close();
  await server?.close();
  await env?.teardown();
});

describe('CRI over the real engine', () => {
  it('Version, Status (both conditions true) and RuntimeConfig', async () => {
    const v = await rpc(client!, (c) => c.version, { version: '0.1.0' });
    expect(v.runtimeName).toBe('podscope');
    expect([v.version, v.runtimeVersion, v.runtimeApiVersion].every(Boolean)).toBe(true);
    const s = await rpc(client!, (c) => c.status, { verbose: false });
    const cond = Object.fromEntries((s.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(cond).toMatchObject({ RuntimeReady: true, NetworkReady: true });
    expect((await rpc(client!, (c) => c.runtimeConfig, {})).linux?.cgroupDriver).toBe(pb.CgroupDriver.CGROUPFS);
  });

  it('run ⇒ status (verbose JSON) ⇒ list ⇒ events ⇒ stop ⇒ remove', async () => {
    const events: pb.ContainerEventResponse[] = [];
    const stream = client!.getContainerEvents({});
    stream.on('data', (e: pb.ContainerEventResponse) => events.push(e));
    stream.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200));

    const config = podConfig('real', {
      portMappings: [
        { protocol: pb.Protocol.TCP, containerPort: 80, hostPort, hostIp: '' },
        { protocol: pb.Protocol.TCP, containerPort: 81, hostPort: 0, hostIp: '' },
      ],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '2M' },
    });
    const { podSandboxId: id } = await rpc(client!, (c) => c.runPodSandbox, { config, runtimeHandler: '' }, 60_000);
    expect(id).toMatch(/^[0-9a-f]{64}$/);

    const res = await rpc(client!, (c) => c.podSandboxStatus, { podSandboxId: id.slice(0, 13), verbose: true });
    const st = res.status!;
    expect(st.state).toBe(pb.PodSandboxState.SANDBOX_READY);
    expect(BigInt(st.createdAt)).toBeGreaterThan(0n);
    expect(st.network?.ip.startsWith(subnetTextPrefix(env!.subnet4))).toBe(true);
    expect(st.network?.additionalIps.map((a) => a.ip)).toEqual([
      expect.stringMatching(new RegExp(`^${escapeRe(subnetTextPrefix(env!.subnet6!))}:`)),
    ]);
    const info = JSON.parse(res.info.info!);
    expect(info.pid).toBeGreaterThan(0);
    expect(info.processStatus).toBe('running');
    expect(info.config.port_mappings).toHaveLength(2);
    expect(info.runtimeSpec.linux.namespaces).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'network' })]));
    expect(info.cniResult.Interfaces.eth0.IPConfigs.map((c: { IP: string }) => c.IP)).toEqual([
      st.network!.ip,
      st.network!.additionalIps[0]!.ip,
    ]);
    expect(info.podscope.ipSelection.reason).toMatch(/ipv4/);
    const pluginTypes = info.podscope.trace
      .filter((t: { plugin?: { verb: string } }) => t.plugin?.verb === 'ADD')
      .map((t: { plugin: { type: string } }) => t.plugin.type)
      .sort();
    expect(pluginTypes).toEqual(['bandwidth', 'bridge', 'loopback', 'portmap']);

    // the client view equals the engine's own
    const view = await api!.status(id);
    expect(view.ip).toBe(st.network!.ip);
    expect(view.trace.length).toBe(info.podscope.trace.length);
    expect(view.portMappings.map((p) => p.passed)).toEqual([true, false]);
    expect(view.bandwidthAnalysis.capability).toEqual({
      ingressRate: 10_000_000,
      ingressBurst: 4294967295,
      egressRate: 2_000_000,
      egressBurst: 4294967295,
    });

    const items = (
      await rpc(client!, (c) => c.listPodSandbox, { filter: pb.PodSandboxFilter.fromPartial({ labelSelector: { app: 'real' } }) })
    ).items;
    expect(items.map((i) => i.id)).toEqual([id]);

    await rpc(client!, (c) => c.stopPodSandbox, { podSandboxId: id }, 60_000);
    const stopped = (await rpc(client!, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false })).status!;
    expect(stopped.state).toBe(pb.PodSandboxState.SANDBOX_NOTREADY);
    expect(stopped.network?.ip).toBe('');
    await rpc(client!, (c) => c.removePodSandbox, { podSandboxId: id }, 60_000);
    expect(await codeOf(rpc(client!, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false }))).toBe(Code.NOT_FOUND);
    await rpc(client!, (c) => c.stopPodSandbox, { podSandboxId: id });
    await rpc(client!, (c) => c.removePodSandbox, { podSandboxId: id });

    const T = pb.ContainerEventType;
    await expect
      .poll(() => events.filter((e) => e.containerId === id).map((e) => e.containerEventType))
      .toEqual([T.CONTAINER_CREATED_EVENT, T.CONTAINER_STARTED_EVENT, T.CONTAINER_STOPPED_EVENT, T.CONTAINER_DELETED_EVENT]);
    stream.cancel();
  });

  it('a bad bandwidth annotation fails RunPodSandbox with the engine message and leaves nothing behind', async () => {
    const config = podConfig('badbw', { annotations: { 'kubernetes.io/ingress-bandwidth': '10' } });
    const e = await rpc(client!, (c) => c.runPodSandbox, { config, runtimeHandler: '' }, 60_000).catch(
      (x: { code: number; details: string }) => x,
    );
    expect((e as { code: number }).code).not.toBe(0);
    expect((e as { details: string }).details).toContain('unreasonably small');
    expect(
      (
        await rpc(client!, (c) => c.listPodSandbox, { filter: pb.PodSandboxFilter.fromPartial({ labelSelector: { app: 'badbw' } }) })
      ).items.filter((i) => i.state === 0),
    ).toEqual([]);
  });
});
