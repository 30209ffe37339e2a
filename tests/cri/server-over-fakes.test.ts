/**
 * Every served RPC through a real unix socket against the real engine over the OS touch-point fakes (no netns,
 * plugins or runc; failures injected at those touch points): codes, unknown and prefix ids,
 * malformed requests, verbose info JSON, the events stream, socket mode, and RPCs answered UNIMPLEMENTED.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Code, type ServiceError } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { PODSCOPE_ERROR_METADATA_KEY } from '../../electron/cri/errors';
import { PodscopeError } from '../../shared/domain/errors';
import { ENGINE_VERSION } from '../../electron/engine/service/engine';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { codeOf, podConfig, rawClient, rawUnary, rpc, tempDir } from './helpers/grpc';

let fakes: TestEngine;
let engine: TestEngine['engine'];
let server: CriServer;
let client: pb.RuntimeServiceClient;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir('podscope-cri-');
  fakes = await createTestEngine();
  engine = fakes.engine;
  server = await startCriServer({ engine, socketPath: join(tmp.dir, 'sub', 'cri.sock') });
  client = rawClient(server.socketPath);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

const run = async (name: string, extra: Partial<pb.PodSandboxConfig> = {}) =>
  (await rpc(client, (c) => c.runPodSandbox, { config: podConfig(name, extra), runtimeHandler: '' })).podSandboxId;

describe('socket', () => {
  it('is created with mode 0660 in a directory created on demand', () => {
    const st = statSync(server.socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o660);
  });

  it('refuses to start a second server on a live socket', async () => {
    await expect(startCriServer({ engine, socketPath: server.socketPath })).rejects.toMatchObject({ code: 'AlreadyExists' });
  });
});

describe('runtime info RPCs', () => {
  it('Version has all four strings and runtime_name podscope', async () => {
    const v = await rpc(client, (c) => c.version, { version: '0.1.0' });
    expect(v).toEqual({ version: '0.1.0', runtimeName: 'podscope', runtimeVersion: ENGINE_VERSION, runtimeApiVersion: 'v1' });
  });

  it('Status reports the engine conditions with reason and message; verbose info is JSON', async () => {
    await fakes.cni.setReady(false); // an empty conf dir: the CNI manager's status() fails as go-cni's does
    try {
      const s = await rpc(client, (c) => c.status, { verbose: true });
      expect(s.status?.conditions).toEqual([
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        {
          type: 'NetworkReady',
          status: false,
          reason: 'NetworkPluginNotReady',
          message: `Network plugin returns error: no network config found in ${engine.options.cniConfDir}: cni plugin not initialized`,
        },
      ]);
      expect(JSON.parse(s.info.config!)).toMatchObject({ version: ENGINE_VERSION, stateDir: engine.options.stateDir });
      expect(JSON.parse(s.info.cniconfig!)).toMatchObject({
        confDir: engine.options.cniConfDir,
        ready: false,
        notReadyReason: `no network config found in ${engine.options.cniConfDir}: cni plugin not initialized`,
      });
      expect((await rpc(client, (c) => c.status, { verbose: false })).info).toEqual({});
    } finally {
      await fakes.cni.setReady(true);
    }
    expect((await rpc(client, (c) => c.status, { verbose: false })).status?.conditions[1]).toEqual({
      type: 'NetworkReady',
      status: true,
      reason: '',
      message: '',
    });
  });

  it('RuntimeConfig says CGROUPFS (critest picks a systemd parent otherwise)', async () => {
    const r = await rpc(client, (c) => c.runtimeConfig, {});
    expect(r.linux?.cgroupDriver).toBe(pb.CgroupDriver.CGROUPFS);
  });

  it('undeclared RuntimeService RPCs are UNIMPLEMENTED; the ImageService is served', async () => {
    expect(await rawUnary(client, '/runtime.v1.RuntimeService/CheckpointContainer')).toBe(Code.UNIMPLEMENTED);
    expect(await rawUnary(client, '/runtime.v1.RuntimeService/PodSandboxStats')).toBe(Code.UNIMPLEMENTED);
    // Exec is declared now (tests/cri/streaming-rpc.test.ts): an empty request is refused as such
    expect(await rawUnary(client, '/runtime.v1.RuntimeService/Exec')).toBe(Code.INVALID_ARGUMENT);
    // the ImageService is served (tests/cri/image-service.test.ts): an empty PullImage is refused as such
    expect(await rawUnary(client, '/runtime.v1.ImageService/PullImage')).toBe(Code.INVALID_ARGUMENT);
    expect(await rawUnary(client, '/runtime.v1.ImageService/ListImages')).toBe(0);
  });
});

describe('sandbox lifecycle', () => {
  it('run ⇒ status READY with created_at ns, IPs, namespace options echoed; non-verbose info empty', async () => {
    const id = await run('web', {
      portMappings: [
        { protocol: pb.Protocol.TCP, containerPort: 80, hostPort: 8080, hostIp: '' },
        { protocol: pb.Protocol.UDP, containerPort: 53, hostPort: 0, hostIp: '' },
      ],
      linux: pb.LinuxPodSandboxConfig.fromPartial({
        securityContext: {
          namespaceOptions: { network: pb.NamespaceMode.POD, pid: pb.NamespaceMode.CONTAINER, ipc: pb.NamespaceMode.POD, targetId: '' },
        },
      }),
    });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const res = await rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false });
    const s = res.status!;
    expect(s.id).toBe(id);
    expect(s.state).toBe(pb.PodSandboxState.SANDBOX_READY);
    expect(BigInt(s.createdAt)).toBeGreaterThan(1_600_000_000_000_000_000n);
    const direct = await engine.status(id);
    expect(s.createdAt).toBe(direct.createdAtNs); // ns precision survives the wire
    expect(s.metadata).toEqual({ name: 'web', namespace: 'cri-test', uid: 'uid-web', attempt: 1 });
    // the IPs the (fake) bridge result gave eth0, picked by the engine's ipv4 preference
    expect(s.network?.ip).toBe(direct.ipSelection!.eth0Ips.find((ip) => !ip.includes(':')));
    expect(s.network?.additionalIps.map((a) => a.ip)).toEqual(direct.ipSelection!.eth0Ips.filter((ip) => ip.includes(':')));
    expect(s.linux?.namespaces?.options).toMatchObject({ network: 0, pid: 1, ipc: 0 });
    expect(s.labels).toEqual({ app: 'web', tier: 'test' });
    expect(s.annotations).toEqual({ note: 'hello' });
    expect(res.info).toEqual({});
    expect(BigInt(res.timestamp)).toBeGreaterThan(0n);
  });

  it('verbose info["info"] is containerd-shaped JSON plus the podscope section', async () => {
    const id = await run('verbose', {
      portMappings: [{ protocol: pb.Protocol.TCP, containerPort: 80, hostPort: 8081, hostIp: '' }],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M' },
    });
    const res = await rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: true });
    expect(Object.keys(res.info)).toEqual(['info']);
    const info = JSON.parse(res.info.info!);
    expect(info.processStatus).toBe('running');
    expect(info.pid).toBeGreaterThan(0);
    expect(info.netNamespaceClosed).toBe(false);
    expect(info.config.metadata.name).toBe('verbose');
    expect(info.config.port_mappings[0]).toEqual({ protocol: 0, container_port: 80, host_port: 8081, host_ip: '' });
    expect(info.runtimeSpec.ociVersion).toBe('1.0.2');
    // containerd's cniResult shape, filled from what the plugins returned
    const eth0 = (await engine.status(id)).networks.find((n) => n.ifName === 'eth0')!.result!;
    expect(info.cniResult.Interfaces.eth0.IPConfigs[0]).toEqual({ IP: res.status!.network!.ip, Gateway: eth0.ips![0]!.gateway });
    expect(info.cniResult.Interfaces.eth0.Mac).toBe(eth0.interfaces!.find((i) => i.name === 'eth0')!.mac);
    expect(info.cniResult.Routes).toEqual([{ dst: '0.0.0.0/0' }, { dst: '::/0' }]);
    expect(info.podscope.ipSelection.reason).toContain('preference ipv4');
    // the trace the engine recorded: every plugin exec, in conflist order, under the engine's own labels
    const plugins = info.podscope.trace.filter((t: { step: string }) => t.step === 'cni.plugin');
    expect(plugins.map((t: { label: string }) => t.label)).toEqual([
      'ADD loopback (cni-loopback/lo)',
      'ADD bridge (containerd-net/eth0)',
      'ADD portmap (containerd-net/eth0)',
      'ADD bandwidth (containerd-net/eth0)',
    ]);
    expect(JSON.parse(plugins[2].plugin.stdin).runtimeConfig.portMappings).toEqual([
      { hostPort: 8081, containerPort: 80, protocol: 'tcp' },
    ]);
    expect(info.podscope.portMappings[0].cni).toEqual({ hostPort: 8081, containerPort: 80, protocol: 'tcp' });
    expect(info.podscope.bandwidthAnalysis.capability.ingressRate).toBe(10_000_000);
  });

  it('malformed requests: missing config or metadata, unsupported security fields ⇒ INVALID_ARGUMENT', async () => {
    const noConfig = rpc(client, (c) => c.runPodSandbox, { config: undefined, runtimeHandler: '' });
    await expect(noConfig).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, details: 'sandbox config must include metadata' });
    const noMeta = rpc(client, (c) => c.runPodSandbox, { config: pb.PodSandboxConfig.fromPartial({ hostname: 'x' }), runtimeHandler: '' });
    await expect(noMeta).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
    const seccomp = podConfig('sec', {
      linux: pb.LinuxPodSandboxConfig.fromPartial({
        securityContext: { seccomp: { profileType: pb.SecurityProfile_ProfileType.Localhost, localhostRef: '/x' } },
      }),
    });
    // seccomp is applied now (containerd's rules): a Localhost profile that does not exist is the error
    await expect(rpc(client, (c) => c.runPodSandbox, { config: seccomp, runtimeHandler: '' })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: expect.stringContaining('cannot load seccomp profile "/x"'),
    });
    const selinux = podConfig('sel', {
      linux: pb.LinuxPodSandboxConfig.fromPartial({ securityContext: { selinuxOptions: { user: 'u', role: '', type: '', level: '' } } }),
    });
    await expect(rpc(client, (c) => c.runPodSandbox, { config: selinux, runtimeHandler: '' })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: expect.stringContaining('linux.security_context.selinux_options'),
    });
    const badPort = podConfig('badport', { portMappings: [{ protocol: 7 as pb.Protocol, containerPort: 1, hostPort: 1, hostIp: '' }] });
    await expect(rpc(client, (c) => c.runPodSandbox, { config: badPort, runtimeHandler: '' })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
    });
  });

  it('a name conflict is ALREADY_EXISTS (the engine code, not containerd FailedPrecondition)', async () => {
    await run('dup');
    expect(await codeOf(run('dup'))).toBe(Code.ALREADY_EXISTS);
  });

  it('CNI/runtime failures are UNKNOWN with the message, and carry the exact Podscope error as trailer', async () => {
    // the bridge plugin's ADD fails with CNI error code 11 ("try again later")
    fakes.cni.failures.push({ verb: 'ADD', network: 'containerd-net', index: 0, message: 'boom', once: true });
    const err = (await rpc(client, (c) => c.runPodSandbox, { config: podConfig('boom'), runtimeHandler: '' }).catch(
      (e: ServiceError) => e,
    )) as ServiceError;
    expect(err.code).toBe(Code.UNKNOWN);
    expect(err.details).toMatch(
      /^failed to setup network for sandbox "[0-9a-f]{64}": plugin type="bridge" failed \(add\): boom \(network "[^"]+", file \/\S+\.conflist\)$/,
    );
    const trailer = JSON.parse((err.metadata.get(PODSCOPE_ERROR_METADATA_KEY)[0] as Buffer).toString());
    expect(trailer).toMatchObject({
      code: 'CniError',
      message: err.details,
      details: { network: 'containerd-net', plugin: 'bridge', verb: 'ADD', cniMsg: 'boom' },
    });
    const id = await run('fails-later');
    fakes.runtime.probeError = new Error('disk on fire'); // status checks the pause pid; that read fails
    try {
      const e = (await rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false }).catch(
        (x: ServiceError) => x,
      )) as ServiceError;
      expect([e.code, e.details]).toEqual([Code.UNKNOWN, 'disk on fire']);
    } finally {
      fakes.runtime.probeError = undefined;
    }
    for (const [code, grpc] of [
      ['FailedPrecondition', Code.FAILED_PRECONDITION],
      ['Unavailable', Code.UNAVAILABLE],
      ['DeadlineExceeded', Code.DEADLINE_EXCEEDED],
      ['Canceled', Code.CANCELLED],
      ['RuntimeError', Code.UNKNOWN],
      ['Internal', Code.UNKNOWN],
    ] as const) {
      fakes.runtime.stopError = new PodscopeError(code, `x ${code}`); // runc kill fails with this code
      const e = (await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: id }).catch((x: ServiceError) => x)) as ServiceError;
      expect([code, e.code, e.details]).toEqual([code, grpc, `x ${code}`]);
    }
  });

  it('unknown ids: stop and remove succeed, status is NOT_FOUND; empty id is INVALID_ARGUMENT', async () => {
    const unknown = 'f'.repeat(64);
    await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: unknown });
    await rpc(client, (c) => c.removePodSandbox, { podSandboxId: unknown });
    await expect(rpc(client, (c) => c.podSandboxStatus, { podSandboxId: unknown, verbose: false })).rejects.toMatchObject({
      code: Code.NOT_FOUND,
    });
    expect(await codeOf(rpc(client, (c) => c.podSandboxStatus, { podSandboxId: '', verbose: false }))).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(client, (c) => c.stopPodSandbox, { podSandboxId: '' }))).toBe(Code.INVALID_ARGUMENT);
  });

  it('prefix ids work for status/stop/remove and list; an ambiguous prefix is refused by status and lists nothing', async () => {
    const id = await run('prefixed');
    const short = id.slice(0, 13);
    expect((await rpc(client, (c) => c.podSandboxStatus, { podSandboxId: short, verbose: false })).status?.id).toBe(id);
    expect(
      (await rpc(client, (c) => c.listPodSandbox, { filter: pb.PodSandboxFilter.fromPartial({ id: short }) })).items.map((i) => i.id),
    ).toEqual([id]);
    await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: short });
    expect((await rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false })).status?.state).toBe(
      pb.PodSandboxState.SANDBOX_NOTREADY,
    );
    // 17 sandboxes ⇒ at least two share a first hex digit (pigeonhole)
    for (let i = 0; i < 17; i++) await engine.run({ config: { metadata: { name: `many-${i}`, namespace: 'n', uid: `u${i}` } } });
    const firsts = (await engine.list()).map((s) => s.id[0]!);
    const shared = firsts.find((c, i) => firsts.indexOf(c) !== i)!;
    expect(await codeOf(rpc(client, (c) => c.podSandboxStatus, { podSandboxId: shared, verbose: false }))).toBe(Code.INVALID_ARGUMENT);
    expect((await rpc(client, (c) => c.listPodSandbox, { filter: pb.PodSandboxFilter.fromPartial({ id: shared }) })).items).toEqual([]);
    await rpc(client, (c) => c.removePodSandbox, { podSandboxId: short });
    await expect(rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false })).rejects.toMatchObject({
      code: Code.NOT_FOUND,
    });
  });

  it('stop ⇒ NOTREADY with no IP; remove ⇒ gone from list and NOT_FOUND; both idempotent', async () => {
    const id = await run('lifecycle');
    await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: id });
    await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: id });
    const s = await rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: true });
    expect(s.status?.state).toBe(pb.PodSandboxState.SANDBOX_NOTREADY);
    expect(s.status?.network).toEqual({ ip: '', additionalIps: [] });
    expect(JSON.parse(s.info.info!).netNamespaceClosed).toBe(true);
    await rpc(client, (c) => c.removePodSandbox, { podSandboxId: id });
    await rpc(client, (c) => c.removePodSandbox, { podSandboxId: id });
    expect((await rpc(client, (c) => c.listPodSandbox, { filter: undefined })).items.some((i) => i.id === id)).toBe(false);
    expect(await codeOf(rpc(client, (c) => c.podSandboxStatus, { podSandboxId: id, verbose: false }))).toBe(Code.NOT_FOUND);
  });

  it('ListPodSandbox filters by state and label selector (all pairs)', async () => {
    const a = await run('list-a', { labels: { app: 'list', role: 'a' } });
    const b = await run('list-b', { labels: { app: 'list', role: 'b' } });
    await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: b });
    const list = async (f: Partial<pb.PodSandboxFilter>) =>
      (await rpc(client, (c) => c.listPodSandbox, { filter: pb.PodSandboxFilter.fromPartial(f) })).items.map((i) => i.id).sort();
    expect(await list({ labelSelector: { app: 'list' } })).toEqual([a, b].sort());
    expect(await list({ labelSelector: { app: 'list', role: 'b' } })).toEqual([b]);
    expect(await list({ labelSelector: { app: 'list' }, state: { state: pb.PodSandboxState.SANDBOX_READY } })).toEqual([a]);
    expect(await list({ labelSelector: { app: 'list' }, state: { state: pb.PodSandboxState.SANDBOX_NOTREADY } })).toEqual([b]);
    expect(await list({ labelSelector: { app: 'nope' } })).toEqual([]);
    const item = (await rpc(client, (c) => c.listPodSandbox, { filter: pb.PodSandboxFilter.fromPartial({ id: a }) })).items[0]!;
    expect(item).toMatchObject({
      id: a,
      metadata: { name: 'list-a', namespace: 'cri-test', uid: 'uid-list-a', attempt: 1 },
      state: 0,
      runtimeHandler: '',
    });
    expect(BigInt(item.createdAt)).toBeGreaterThan(0n);
  });
});

describe('GetContainerEvents', () => {
  it('streams CREATED, STARTED, STOPPED, DELETED with container id = sandbox id', async () => {
    const stream = client.getContainerEvents({});
    const events: pb.ContainerEventResponse[] = [];
    stream.on('data', (e: pb.ContainerEventResponse) => events.push(e));
    stream.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200)); // the server subscribes asynchronously
    const id = await run('events');
    await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: id });
    await rpc(client, (c) => c.removePodSandbox, { podSandboxId: id });
    await expect.poll(() => events.length).toBe(4);
    stream.cancel();
    const T = pb.ContainerEventType;
    expect(events.map((e) => e.containerEventType)).toEqual([
      T.CONTAINER_CREATED_EVENT,
      T.CONTAINER_STARTED_EVENT,
      T.CONTAINER_STOPPED_EVENT,
      T.CONTAINER_DELETED_EVENT,
    ]);
    expect(events.every((e) => e.containerId === id && e.podSandboxStatus?.id === id && BigInt(e.createdAt) > 0n)).toBe(true);
    expect(events[1]!.podSandboxStatus?.state).toBe(pb.PodSandboxState.SANDBOX_READY);
    expect(events[2]!.podSandboxStatus?.state).toBe(pb.PodSandboxState.SANDBOX_NOTREADY);
  });

  it('server close ends open event streams and removes the socket', async () => {
    const t = tempDir('podscope-cri-close-');
    const other = await createTestEngine();
    const s = await startCriServer({ engine: other.engine, socketPath: join(t.dir, 'c.sock') });
    const c = rawClient(s.socketPath);
    const stream = c.getContainerEvents({});
    const ended = new Promise<string>((resolve) => {
      stream.on('end', () => resolve('end'));
      stream.on('error', (e: ServiceError) => resolve(`error ${e.code}`));
    });
    stream.on('data', () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    await s.close();
    expect(await ended).toBe('end');
    expect(() => statSync(s.socketPath)).toThrow();
    c.close();
    await other.close();
    t.cleanup();
  });
});
