/**
 * Exec, Attach and PortForward through a real unix socket against the real engine over the OS touch-point fakes,
 * with an in-test ContainerStreaming behind the streaming server: the RPCs validate as kubelet's streaming server
 * and containerd do and return a URL on 127.0.0.1, and Podscope's CRI client (createCriEndpointApi().streaming)
 * completes sessions through those URLs over SPDY — the path the app and CLI take to any CRI runtime.
 */
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Code } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { codeOf, podConfig, rawClient, rpc, tempDir } from './helpers/grpc';
import { fakeStreaming, upperCaseServer, type FakeStreaming } from '../protocol/streaming-fake';

let fakes: TestEngine;
let server: CriServer;
let client: pb.RuntimeServiceClient;
let endpoint: CriEndpointApi;
let streaming: FakeStreaming;
let tmp: ReturnType<typeof tempDir>;
let pod: string;
let running: string;
let created: string;
let target: { port: number; server: Server };
const IMAGE = 'podscope.test/busybox:1';

beforeAll(async () => {
  tmp = tempDir('pss2-cri-');
  fakes = await createTestEngine({ tmpPrefix: 'pss2-fakes-' });
  await fakes.loadImage(IMAGE, { config: { Cmd: ['sh'] } });
  streaming = fakeStreaming();
  target = await upperCaseServer();
  streaming.ports.set(80, target.port);
  server = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock'), streaming: { streaming } });
  client = rawClient(server.socketPath);
  endpoint = createCriEndpointApi(`unix://${server.socketPath}`);
  pod = (await rpc(client, (c) => c.runPodSandbox, { config: podConfig('stream'), runtimeHandler: '' })).podSandboxId;
  const ctr = (name: string) => pb.ContainerConfig.fromPartial({ metadata: { name }, image: { image: IMAGE }, command: ['sleep', '100'] });
  running = (await rpc(client, (c) => c.createContainer, { podSandboxId: pod, config: ctr('run'), sandboxConfig: undefined })).containerId;
  await rpc(client, (c) => c.startContainer, { containerId: running });
  created = (await rpc(client, (c) => c.createContainer, { podSandboxId: pod, config: ctr('made'), sandboxConfig: undefined })).containerId;
});

afterAll(async () => {
  endpoint?.close();
  client?.close();
  await server?.close();
  target?.server.close();
  await fakes?.close();
  tmp?.cleanup();
});

const execReq = (extra: Partial<pb.ExecRequest> = {}): pb.ExecRequest => ({
  containerId: running,
  cmd: ['split', '3'],
  tty: false,
  stdin: false,
  stdout: true,
  stderr: true,
  ...extra,
});

describe('Exec / Attach / PortForward RPCs', () => {
  it('Exec returns a single-use URL on the loopback streaming server', async () => {
    const { url } = await rpc(client, (c) => c.exec, execReq());
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/exec\/[A-Za-z0-9_-]{8}$/);
    expect(url.startsWith(server.streamingUrl!)).toBe(true);
  });

  it('Exec validates as kubelet and containerd: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION', async () => {
    // kubelet validateExecRequest: tty with stderr, none of the three streams, empty container id
    expect(await codeOf(rpc(client, (c) => c.exec, execReq({ tty: true, stderr: true })))).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(client, (c) => c.exec, execReq({ stdout: false, stderr: false })))).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(client, (c) => c.exec, execReq({ containerId: '' })))).toBe(Code.INVALID_ARGUMENT);
    // Podscope refuses an empty command up front (containerd lets runc fail on it later)
    expect(await codeOf(rpc(client, (c) => c.exec, execReq({ cmd: [] })))).toBe(Code.INVALID_ARGUMENT);
    // containerd: the container must exist and be running
    expect(await codeOf(rpc(client, (c) => c.exec, execReq({ containerId: 'ffffffffffff' })))).toBe(Code.NOT_FOUND);
    expect(await codeOf(rpc(client, (c) => c.exec, execReq({ containerId: created })))).toBe(Code.FAILED_PRECONDITION);
    expect(await codeOf(rpc(client, (c) => c.attach, { containerId: created, stdin: true, tty: false, stdout: true, stderr: false }))).toBe(
      Code.FAILED_PRECONDITION,
    );
    expect(await codeOf(rpc(client, (c) => c.attach, { containerId: running, stdin: false, tty: true, stdout: true, stderr: true }))).toBe(
      Code.INVALID_ARGUMENT,
    );
  });

  it('PortForward needs a known, ready sandbox and ports in range', async () => {
    expect(await codeOf(rpc(client, (c) => c.portForward, { podSandboxId: '', port: [80] }))).toBe(Code.INVALID_ARGUMENT);
    expect(await codeOf(rpc(client, (c) => c.portForward, { podSandboxId: 'ffffffffffff', port: [80] }))).toBe(Code.NOT_FOUND);
    expect(await codeOf(rpc(client, (c) => c.portForward, { podSandboxId: pod, port: [70000] }))).toBe(Code.INVALID_ARGUMENT);
    const { url } = await rpc(client, (c) => c.portForward, { podSandboxId: pod.slice(0, 13), port: [80] });
    expect(url).toMatch(/\/portforward\/[A-Za-z0-9_-]{8}$/);
  });

  it('a prefix id is resolved before the URL is made: the session sees the full container id', async () => {
    const out = new PassThrough();
    const r = await endpoint.streaming.exec({
      containerId: running.slice(0, 12),
      cmd: ['split', '0'],
      stdin: null,
      stdout: out,
      stderr: null,
      tty: false,
    });
    expect(r.exitCode).toBe(0);
    expect(streaming.calls.at(-1)?.containerId).toBe(running);
  });
});

describe("the CRI client's ContainerStreaming (RPC + SPDY session)", () => {
  it('exec: stdout and stderr apart, exit code 3', async () => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const o = new PassThrough().on('data', (c: Buffer) => out.push(c));
    const e = new PassThrough().on('data', (c: Buffer) => err.push(c));
    const r = await endpoint.streaming.exec({ containerId: running, cmd: ['split', '3'], stdin: null, stdout: o, stderr: e, tty: false });
    expect(r.exitCode).toBe(3);
    expect(Buffer.concat(out).toString()).toBe('to stdout\n');
    expect(Buffer.concat(err).toString()).toBe('to stderr\n');
  });

  it('exec: stdin is echoed back', async () => {
    const out: Buffer[] = [];
    const o = new PassThrough().on('data', (c: Buffer) => out.push(c));
    const r = await endpoint.streaming.exec({
      containerId: running,
      cmd: ['cat'],
      stdin: Readable.from([Buffer.from('over cri')]),
      stdout: o,
      stderr: null,
      tty: false,
    });
    expect(r.exitCode).toBe(0);
    expect(Buffer.concat(out).toString()).toBe('over cri');
  });

  it('exec on a stopped container is refused before any session (FailedPrecondition)', async () => {
    await expect(
      endpoint.streaming.exec({ containerId: created, cmd: ['cat'], stdin: null, stdout: new PassThrough(), stderr: null, tty: false }),
    ).rejects.toMatchObject({ code: 'FailedPrecondition' });
  });

  it('port-forward: a local connection reaches the pod port and the answer comes back', async () => {
    const local = createServer({ allowHalfOpen: true }, (sock) => {
      void endpoint.streaming.portForward({ sandboxId: pod, port: 80, stream: sock });
    });
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
    const c = connect({ host: '127.0.0.1', port: (local.address() as { port: number }).port, allowHalfOpen: true });
    const got: Buffer[] = [];
    c.on('data', (d: Buffer) => got.push(d));
    await new Promise<void>((r) => c.once('connect', r));
    c.end('hello pod');
    await new Promise<void>((r) => c.once('close', () => r()));
    local.close();
    expect(Buffer.concat(got).toString()).toBe('HELLO POD');
  });
});
