/**
 * Forwards and exec sessions end with their pod, and say why: in the app (the IPC router's stream sessions over the
 * real engine) and in the CLI (`podscope port-forward --endpoint` against a CRI server over the same engine). After
 * the pod is removed the local port refuses connections. Needs root. Bridge and subnets from the test kit's
 * allocator (a lease), temp dirs /tmp/podscope-ux172-*.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createRouter, type Router } from '../../electron/ipc/router';
import type { SenderInfo } from '../../electron/ipc/sender';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { LOCAL_ENDPOINT_ID } from '../../shared/domain/endpoints';
import { createClient, type PodscopeClient } from '../../shared/ipc/client';
import type { PushedEvent } from '../../shared/ipc/events';
import { BUSYBOX_IMAGE, INDEX_HTML, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge');
const ROOT = join(__dirname, '../..');

let env: RealEnv;
let engine: SandboxEngine;
let treeDir: string;

function get(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/index.html', timeout: 3000 }, (res) => {
      let b = '';
      res.on('data', (c: Buffer) => (b += c.toString()));
      res.on('end', () => resolve(b));
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** 'refused' when nothing listens on the port any more */
function dial(port: number): Promise<'connected' | 'refused'> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', () => resolve('refused'));
  });
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** a running pod with busybox httpd on 127.0.0.1:8080 */
async function webPod(name: string): Promise<{ podId: string; containerId: string }> {
  const config: PodSandboxConfigInput = {
    metadata: { name, namespace: 'podscope-ux172', uid: `uid-${name}` },
    linux: { security_context: { seccomp: { profile_type: 0 } } },
  };
  const { id: podId } = await engine.run({ config });
  const { id: containerId } = await engine.createContainer({
    podSandboxId: podId,
    config: {
      metadata: { name: 'web' },
      image: { image: BUSYBOX_IMAGE },
      command: ['httpd', '-f', '-p', '127.0.0.1:8080', '-h', '/www'],
      linux: { security_context: { seccomp: { profile_type: 0 } } },
    },
  });
  await engine.startContainer(containerId);
  return { podId, containerId };
}

describe.skipIf(!canRun)('sessions end with their pod', () => {
  beforeAll(async () => {
    env = await createRealEnv({ tag: 'ux172' });
    treeDir = await mkdtemp(join(tmpdir(), 'podscope-ux172-tree-'));
    await buildBusyboxTree(join(treeDir, 'busybox'));
    engine = await env.engine({}, { images: new LocalBusyboxStore(join(treeDir, 'busybox')) });
  });
  afterAll(async () => {
    await env?.teardown();
    if (treeDir) await rm(treeDir, { recursive: true, force: true });
  });

  describe('in the app', () => {
    let router: Router;
    let client: PodscopeClient;
    const events: PushedEvent[] = [];
    beforeAll(() => {
      const endpoints = createEndpointRegistry({ local: engine });
      router = createRouter({ engine, endpoints, isTrustedSender: () => true });
      const sender: SenderInfo = { transport: 'websocket', url: 'http://127.0.0.1', authenticated: true, connectionId: 'win' };
      router.subscribe((e, target) => {
        if (target === undefined || target === 'win') events.push(e);
      });
      client = createClient({
        kind: 'memory',
        invoke: (channel, payload) => router.handle(channel, payload, sender),
        onEvent: () => () => undefined,
      });
    });
    afterAll(() => router?.dispose());

    it('removing the pod ends its forward (the port refuses) and its exec session, each with the reason', async () => {
      const { podId, containerId } = await webPod('fwd-app');
      const fwd = await client.call('portForward.open', { endpointId: LOCAL_ENDPOINT_ID, podSandboxId: podId, port: 8080, hostPort: 0 });
      expect(await until('the page through the forward', () => get(fwd.hostPort))).toBe(INDEX_HTML);
      const { sessionId } = await client.call('stream.exec', { containerId, cmd: ['sleep', '1000'], tty: false });
      await engine.remove(podId);
      const closed = await until('portForward.closed', () =>
        events.find((e): e is Extract<PushedEvent, { kind: 'portForward.closed' }> => e.kind === 'portForward.closed' && e.id === fwd.id),
      );
      expect(closed.reason).toBe('pod fwd-app was removed');
      expect(await dial(fwd.hostPort)).toBe('refused');
      expect(await client.call('portForward.list', {})).toEqual([]);
      const exit = await until('stream.exit', () =>
        events.find((e): e is Extract<PushedEvent, { kind: 'stream.exit' }> => e.kind === 'stream.exit' && e.sessionId === sessionId),
      );
      expect(exit.reason).toMatch(/^(container web (exited|was removed)|pod fwd-app was removed)$/);
    });
  });

  describe('in the CLI', () => {
    let cri: CriServer;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'podscope-ux172-cri-'));
      cri = await startCriServer({ engine, socketPath: join(dir, 'cri.sock') });
    });
    afterAll(async () => {
      await cri?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('podscope port-forward exits 3 saying the pod was removed, and its port refuses', async () => {
      const { podId } = await webPod('fwd-cli');
      const p = spawn(process.execPath, ['bin/podscope.mjs', 'port-forward', '--endpoint', `unix://${cri.socketPath}`, podId, ':8080'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      p.stdout.on('data', (b: Buffer) => (out += b.toString()));
      p.stderr.on('data', (b: Buffer) => (err += b.toString()));
      const exited = new Promise<number | null>((r) => p.once('close', (code) => r(code)));
      try {
        const port = Number(await until('the forwarding line', () => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1], 30_000));
        expect(await until('the page through the CLI forward', () => get(port))).toBe(INDEX_HTML);
        await engine.remove(podId);
        const code = await Promise.race([exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 10_000))]);
        expect(err).toContain('pod fwd-cli was removed; port-forward ended');
        expect(code).toBe(3);
        expect(await dial(port)).toBe('refused');
      } finally {
        if (p.exitCode === null) p.kill('SIGKILL');
      }
    });
  });
});
