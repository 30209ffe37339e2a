/**
 * `podscope exec`, `attach` and `port-forward` as separate processes against `--endpoint unix://…` (a CRI server in
 * this process over the test engine, with an in-test ContainerStreaming): the command's output, stderr and exit code
 * come back through the Exec RPC and the SPDY session, stdin is forwarded, and port-forward serves a local port until
 * SIGINT, then exits.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:net';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { podConfig, rawClient, rpc, tempDir } from './helpers/grpc';
import { fakeStreaming, upperCaseServer } from '../protocol/streaming-fake';
import { parsePortPair } from '../../electron/cli/commands/port-forward';

let fakes: TestEngine;
let server: CriServer;
let client: pb.RuntimeServiceClient;
let tmp: ReturnType<typeof tempDir>;
let pod: string;
let ctr: string;
let target: { port: number; server: Server };
const IMAGE = 'podscope.test/busybox:1';
const ROOT = join(__dirname, '../..');

beforeAll(async () => {
  tmp = tempDir('pss2-cli-');
  fakes = await createTestEngine({ tmpPrefix: 'pss2-clifakes-' });
  await fakes.loadImage(IMAGE, { config: { Cmd: ['sh'] } });
  const streaming = fakeStreaming();
  target = await upperCaseServer();
  streaming.ports.set(80, target.port);
  server = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock'), streaming: { streaming } });
  client = rawClient(server.socketPath);
  pod = (await rpc(client, (c) => c.runPodSandbox, { config: podConfig('cli'), runtimeHandler: '' })).podSandboxId;
  ctr = (
    await rpc(client, (c) => c.createContainer, {
      podSandboxId: pod,
      config: pb.ContainerConfig.fromPartial({ metadata: { name: 'c' }, image: { image: IMAGE }, command: ['sleep', '100'] }),
      sandboxConfig: undefined,
    })
  ).containerId;
  await rpc(client, (c) => c.startContainer, { containerId: ctr });
});

afterAll(async () => {
  client?.close();
  await server?.close();
  target?.server.close();
  await fakes?.close();
  tmp?.cleanup();
});

function podscope(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['bin/podscope.mjs', ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    if (stdin !== undefined) p.stdin.end(stdin);
    else p.stdin.end();
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('podscope exec / attach / port-forward --endpoint', () => {
  it('exec: stdout and stderr apart, the exit code is the command’s', async () => {
    const r = await podscope(['exec', '--endpoint', `unix://${server.socketPath}`, ctr.slice(0, 12), 'split', '3']);
    expect(r).toMatchObject({ code: 3, stdout: 'to stdout\n' });
    expect(r.stderr).toContain('to stderr\n');
  });

  it('exec -i: stdin reaches the command', async () => {
    const r = await podscope(['exec', '-i', '--endpoint', `unix://${server.socketPath}`, ctr, 'cat'], 'piped in');
    expect(r).toMatchObject({ code: 0, stdout: 'piped in' });
  });

  it('attach -i: stdin goes to the container and its output comes back', async () => {
    const r = await podscope(['attach', '-i', '--endpoint', `unix://${server.socketPath}`, ctr], 'to the container');
    expect(r).toMatchObject({ code: 0, stdout: 'to the container' });
  });

  it('port-forward: the printed local port reaches the pod port; SIGINT ends it', async () => {
    const p = spawn(process.execPath, ['bin/podscope.mjs', 'port-forward', '--endpoint', `unix://${server.socketPath}`, pod, ':80'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => p.on('close', (code) => r(code)));
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      p.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /Forwarding from 127\.0\.0\.1:(\d+) -> 80/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      p.once('close', () => reject(new Error(`port-forward exited: ${out}`)));
    });
    for (const word of ['first', 'second']) {
      const c = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
      const got: Buffer[] = [];
      c.on('data', (d: Buffer) => got.push(d));
      c.end(word);
      await new Promise<void>((r) => c.once('close', () => r()));
      expect(Buffer.concat(got).toString()).toBe(word.toUpperCase());
    }
    p.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('port pairs are read as kubectl and crictl write them', () => {
    expect(parsePortPair('8080:80')).toEqual({ local: 8080, remote: 80 });
    expect(parsePortPair(':80')).toEqual({ local: 0, remote: 80 });
    expect(parsePortPair('80')).toEqual({ local: 80, remote: 80 });
    expect(() => parsePortPair('80:0')).toThrow(/LOCAL:\]REMOTE/);
    expect(() => parsePortPair('x')).toThrow();
  });
});
