/**
 * The CRI client (SandboxApi over a socket) and the endpoint registry against a Podscope CRI server on the real
 * engine over the OS touch-point fakes: full view incl. trace, clear Unavailable errors for unreachable and non-CRI sockets, capabilities,
 * events, and the GUI-as-normal-user path (a non-root client through the group-owned 0660 socket).
 */
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client';
import { createEndpointRegistry } from '../../electron/endpoints';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import { ENGINE_VERSION } from '../../electron/engine/service/engine';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { tempDir } from './helpers/grpc';

let fakes: TestEngine;
let engine: TestEngine['engine'];
let server: CriServer;
let api: CriEndpointApi;
let tmp: ReturnType<typeof tempDir>;
const NOBODY = 65534;
const GUI_GROUP = 4242;

beforeAll(async () => {
  tmp = tempDir('podscope-cri-client-');
  chmodSync(tmp.dir, 0o755); // let the non-root test user reach the socket
  fakes = await createTestEngine();
  engine = fakes.engine;
  server = await startCriServer({ engine, socketPath: join(tmp.dir, 'podscope.sock'), group: GUI_GROUP });
  api = createCriEndpointApi(`unix://${server.socketPath}`);
});

afterAll(async () => {
  api?.close();
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

describe('createCriEndpointApi against a Podscope daemon', () => {
  it('connects with Version and knows it is Podscope', async () => {
    expect(await api.connect()).toMatchObject({ runtimeName: 'podscope', runtimeApiVersion: 'v1' });
    expect(await api.isPodscope()).toBe(true);
  });

  it('run / status / list / stop / remove round-trip with the full view incl. plugin trace', async () => {
    const { id } = await api.run({
      config: {
        metadata: { name: 'gui', namespace: 'default', uid: 'u-gui' },
        port_mappings: [
          { container_port: 80, host_port: 8080 },
          { protocol: 1, container_port: 53 },
        ],
        annotations: { 'kubernetes.io/egress-bandwidth': '1Mi' },
        dns_config: { servers: ['10.96.0.10'] },
      },
    });
    const st = await api.status(id.slice(0, 13));
    // host-port conflicts are computed by the engine that is asked (the probe's view of its own host); they do not
    // travel over CRI's verbose info, so the peer's status leaves them out
    const { hostPortConflicts, ...direct } = await engine.status(id);
    expect(hostPortConflicts).toEqual([]);
    expect(st).toEqual(direct);
    // the engine's trace comes through whole: every plugin exec under the engine's own labels
    expect(st.trace.filter((t) => t.step === 'cni.plugin').map((t) => [t.label, t.plugin?.exitCode])).toEqual([
      ['ADD loopback (cni-loopback/lo)', 0],
      ['ADD bridge (containerd-net/eth0)', 0],
      ['ADD portmap (containerd-net/eth0)', 0],
      ['ADD bandwidth (containerd-net/eth0)', 0],
    ]);
    expect(st.ipSelection?.eth0Ips).toHaveLength(2);
    expect(st.portMappings.map((p) => p.passed)).toEqual([true, false]);
    expect(st.config.dns_config).toEqual({ servers: ['10.96.0.10'], searches: [], options: [] });
    const [item] = await api.list({ id });
    expect(item).toMatchObject({
      id,
      name: 'gui_default_u-gui_0',
      state: 'SANDBOX_READY',
      ip: st.ip,
      additionalIps: st.additionalIps,
      hostNetwork: false,
      createdAtNs: st.createdAtNs,
    });
    expect(await api.list({ name: 'gui', namespace: 'default' })).toHaveLength(1);
    expect(await api.list({ name: 'other' })).toHaveLength(0);
    await api.stop(id);
    expect((await api.list({ id, state: 'SANDBOX_NOTREADY' })).map((s) => s.id)).toEqual([id]);
    await api.remove(id);
    await expect(api.status(id)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('errors come back with their Podscope code; config validation happens before the wire', async () => {
    await expect(api.run({ config: { metadata: { name: 'x' }, port_mappings: [{ protocol: 9 }] } })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    fakes.cni.failures.push({ verb: 'ADD', network: 'containerd-net', index: 0, message: 'bridge said no', once: true });
    await expect(api.run({ config: { metadata: { name: 'y' } } })).rejects.toMatchObject({
      code: 'CniError',
      message: expect.stringMatching(
        /^failed to setup network for sandbox "[0-9a-f]{64}": plugin type="bridge" failed \(add\): bridge said no \(network "[^"]+", file \/\S+\.conflist\)$/,
      ),
    });
    await expect(api.run({ config: { metadata: { name: 'z' } }, ipPreference: 'ipv6' })).rejects.toMatchObject({ code: 'Unimplemented' });
    await expect(api.preview({ config: { metadata: { name: 'z' } } })).rejects.toMatchObject({ code: 'Unimplemented' });
  });

  it('conditions, CNI config and engine info come through Status', async () => {
    expect((await api.runtimeConditions()).map((c) => c.type)).toEqual(['RuntimeReady', 'NetworkReady']);
    expect((await api.cniConfig()).confDir).toBe(engine.options.cniConfDir);
    expect(await api.info()).toMatchObject({ version: ENGINE_VERSION, stateDir: engine.options.stateDir });
  });

  it('streaming is claimed only where Exec is served: a runtime without it answers UNIMPLEMENTED and is not offered exec', async () => {
    expect(await api.supportsStreaming()).toBe(true);
    // the same engine served without any ContainerStreaming: Exec/Attach/PortForward are UNIMPLEMENTED there
    const bare = new Proxy(engine, { get: (t, k) => (k === 'streaming' ? undefined : Reflect.get(t, k, t)) });
    const plain = await startCriServer({ engine: bare, socketPath: join(tmp.dir, 'no-streaming.sock') });
    const plainApi = createCriEndpointApi(`unix://${plain.socketPath}`);
    try {
      expect(await plainApi.supportsStreaming()).toBe(false);
    } finally {
      plainApi.close();
      await plain.close();
    }
  });

  it('subscribe turns GetContainerEvents into sandbox events', async () => {
    const seen: SandboxEvent[] = [];
    const stop = api.subscribe((e) => seen.push(e));
    expect(await api.supportsEvents()).toBe(true);
    const { id } = await api.run({ config: { metadata: { name: 'ev', namespace: 'default', uid: 'u-ev' } } });
    await api.remove(id);
    await expect.poll(() => seen.map((e) => e.type)).toEqual(['sandbox.added', 'sandbox.changed', 'sandbox.changed', 'sandbox.removed']);
    stop();
  });
});

describe('unreachable and non-CRI sockets', () => {
  it('a missing socket is Unavailable naming the path', async () => {
    const missing = join(tmp.dir, 'nope.sock');
    const a = createCriEndpointApi(missing, { connectTimeoutMs: 2000 });
    await expect(a.list()).rejects.toMatchObject({ code: 'Unavailable', message: expect.stringContaining(missing) });
    a.close();
  });

  it('a socket that is not gRPC (plain HTTP/1, or silent) is Unavailable naming the path', async () => {
    const httpPath = join(tmp.dir, 'http.sock');
    const http = createHttpServer((_q, r) => r.end('hello')).listen(httpPath);
    const silentPath = join(tmp.dir, 'silent.sock');
    const silent = createNetServer(() => undefined).listen(silentPath);
    try {
      for (const p of [httpPath, silentPath]) {
        const a = createCriEndpointApi(p, { connectTimeoutMs: 1500 });
        await expect(a.connect()).rejects.toMatchObject({ code: 'Unavailable', message: expect.stringContaining(p) });
        a.close();
      }
    } finally {
      http.close();
      silent.close();
    }
  });

  it('a relative path is InvalidArgument', () => {
    expect(() => createCriEndpointApi('containerd.sock')).toThrow(/absolute/);
  });
});

describe('endpoint registry', () => {
  it("forwards an added endpoint's sandbox events under its id (the UI stops polling endpoints that stream)", async () => {
    const otherFakes = await createTestEngine(); // a second daemon, so the events cannot come from the local engine
    const other = otherFakes.engine;
    const otherServer = await startCriServer({ engine: other, socketPath: join(tmp.dir, 'other.sock') });
    const reg = createEndpointRegistry({ local: engine });
    try {
      const view = await reg.add({ address: otherServer.socketPath });
      const seen: Array<[string, SandboxEvent['type']]> = [];
      reg.subscribe!((endpointId, e) => seen.push([endpointId, e.type]));
      await new Promise((r) => setTimeout(r, 200)); // the stream is open
      await other.run({ config: { metadata: { name: 'ev', namespace: 'ns', uid: 'u' } } });
      for (let i = 0; i < 50 && !seen.some(([, t]) => t === 'sandbox.added'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(seen).toContainEqual([view.id, 'sandbox.added']);
      await reg.remove(view.id);
      const before = seen.length;
      await other.run({ config: { metadata: { name: 'ev2', namespace: 'ns', uid: 'u' } } });
      await new Promise((r) => setTimeout(r, 200));
      expect(seen.length).toBe(before); // removed: no more forwarding
    } finally {
      reg.close();
      await otherServer.close();
      await otherFakes.close();
    }
  });

  it('holds local plus added CRI endpoints with probed capabilities', async () => {
    const reg = createEndpointRegistry({ local: engine });
    try {
      const view = await reg.add({ address: `unix://${server.socketPath}`, label: 'daemon' });
      expect(view).toMatchObject({
        kind: 'cri',
        label: 'daemon',
        runtimeName: 'podscope',
        connected: true,
        capabilities: { pluginTrace: true, preview: false, cniConfig: true, events: true },
      });
      await expect(reg.add({ address: server.socketPath })).rejects.toMatchObject({ code: 'AlreadyExists' });
      await expect(reg.add({ address: join(tmp.dir, 'none.sock') })).rejects.toMatchObject({ code: 'Unavailable' });
      const list = await reg.list();
      expect(list.map((e) => [e.id, e.kind, e.connected])).toEqual([
        ['local', 'podscope-engine', true],
        [view.id, 'cri', true],
      ]);
      expect(reg.api('local')).toBe(engine);
      expect((await reg.api(view.id).runtimeConditions()).length).toBe(2);
      expect(() => reg.api('cri-999')).toThrow(/no endpoint/);
      await expect(reg.remove('local')).rejects.toMatchObject({ code: 'FailedPrecondition' });
      await reg.remove(view.id);
      expect((await reg.list()).map((e) => e.id)).toEqual(['local']);
    } finally {
      reg.close();
    }
  });
});

describe('GUI as a normal user against a root daemon', () => {
  // The daemon's socket is root:<group> 0660: a user in that group connects, anyone else gets a clear error.
  const script = (socket: string) => `
    import { createCriEndpointApi } from ${JSON.stringify(join(process.cwd(), 'electron/cri/client/index.ts'))};
    const api = createCriEndpointApi(${JSON.stringify(socket)}, { connectTimeoutMs: 3000 });
    try { const v = await api.connect(); console.log(JSON.stringify({ ok: v.runtimeName, uid: process.getuid(), n: (await api.list()).length })); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }
    finally { api.close(); }`;

  // async on purpose: the server under test lives in this process and must keep answering
  const runAs = async (gid: number) => {
    const file = join(tmp.dir, `client-${gid}.mts`);
    writeFileSync(file, script(server.socketPath));
    chmodSync(file, 0o644);
    const r = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', file],
        {
          uid: NOBODY,
          gid,
          cwd: process.cwd(),
          encoding: 'utf8',
          timeout: 60_000,
          env: { PATH: process.env.PATH, HOME: '/tmp', TSX_DISABLE_CACHE: '1' },
        },
        (_e, stdout, stderr) => resolve({ stdout, stderr }),
      );
    });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`child failed: ${r.stderr || r.stdout}`);
    }
  };

  it('uid 65534 in the socket group can list sandboxes', async () => {
    expect(await runAs(GUI_GROUP)).toMatchObject({ ok: 'podscope', uid: NOBODY });
  });

  it('uid 65534 outside the group gets Unavailable naming the socket', async () => {
    const r = await runAs(NOBODY);
    expect(r.code).toBe('Unavailable');
    expect(r.message).toContain(server.socketPath);
  });
});
