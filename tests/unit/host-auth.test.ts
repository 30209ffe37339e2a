import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { assembleAppCore } from '../../electron/core/app-core';
import { startBrowserHost, type BrowserHost } from '../../electron/host/browser-host';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import type { ServerFrame } from '../../shared/ipc/wire';

let host: BrowserHost;
let fakes: TestEngine;
let dir: string;
let parent: string;

beforeAll(async () => {
  // <tmp>/psc-host-X/{renderer, psc-secret.txt}: the secret sits next to the served dir, as a traversal target
  parent = await mkdtemp(join(tmpdir(), 'psc-host-'));
  dir = join(parent, 'renderer');
  await mkdir(join(dir, 'assets'), { recursive: true });
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>Podscope</title>');
  await writeFile(join(dir, 'assets', 'app.js'), 'console.log(1)');
  await writeFile(join(parent, 'psc-secret.txt'), 'secret');
  fakes = await createTestEngine();
  host = await startBrowserHost({ core: assembleAppCore(fakes.engine), rendererDir: dir });
});
afterAll(async () => {
  await host?.close();
  await fakes?.close();
  await rm(parent, { recursive: true, force: true });
});

function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: host.port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function openWs(query: string, headers: Record<string, string> = {}): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${host.port}/ipc${query}`, { headers });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.once('error', () => resolve({ status: -1 }));
  });
}

const origin = () => `http://127.0.0.1:${host.port}`;

describe('browser host auth (real HTTP + WS on 127.0.0.1)', () => {
  it('listens on loopback and hands out a URL with a long random token', () => {
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
  });

  it('refuses HTTP without a token, with a wrong token, or from a foreign Origin', async () => {
    expect((await get('/')).status).toBe(401);
    expect((await get('/?token=nope')).status).toBe(401);
    expect((await get(`/?token=${host.token}`, { Origin: 'http://evil.example' })).status).toBe(403);
    expect((await get(`/?token=${host.token}`, { Host: 'evil.example' })).status).toBe(403);
  });

  it('serves the renderer with the token, sets a strict per-port cookie (not the token) and security headers', async () => {
    const res = await get(`/?token=${host.token}`);
    expect(res.status).toBe(200);
    expect(res.body).toContain('Podscope');
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toMatch(new RegExp(`^podscope_token_${host.port}=[A-Za-z0-9_-]{43}$`));
    expect(cookie).not.toContain(host.token);
    expect(String(res.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    const asset = await get('/assets/app.js', { Cookie: cookie });
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toContain('javascript');
    expect((await get('/assets/app.js', { Cookie: `podscope_token_${host.port}=wrong` })).status).toBe(401);
    // cookies are not scoped by port, so a page on another loopback port could receive this one: it must not
    // open the engine's WebSocket, which needs the token itself
    expect((await openWs('', { Origin: origin(), Cookie: cookie })).status).toBe(401);
  });

  it('answers hostile input with an error and keeps running (the engine shares the process)', async () => {
    expect((await get('/', { Cookie: `podscope_token_${host.port}=%E0%A4%A` })).status).toBe(401);
    expect((await get('//a:99999/')).status).toBe(400);
    expect((await openWs('', { Cookie: '%E0%A4%A=%' })).status).toBe(401);
    const { ws } = await openWs(`?token=${host.token}`, { Origin: origin() });
    const closed = new Promise<number>((resolve) => ws!.once('close', (code) => resolve(code)));
    ws!.send('x'.repeat(5 * 1024 * 1024)); // over the 4 MiB frame limit
    expect(await closed).toBeGreaterThan(1000);
    expect((await get(`/?token=${host.token}`)).status).toBe(200);
  });

  it('never serves files outside the renderer dir', async () => {
    const res = await get(`/..%2fpsc-secret.txt?token=${host.token}`);
    expect([403, 404]).toContain(res.status);
    expect(res.body).not.toContain('secret');
  });

  it('refuses WebSocket upgrades without a token, with a bad token or a foreign Origin', async () => {
    expect((await openWs('')).status).toBe(401);
    expect((await openWs('?token=bad')).status).toBe(401);
    expect((await openWs(`?token=${host.token}`, { Origin: 'http://evil.example' })).status).toBe(403);
    expect((await openWs('', { Origin: 'https://evil.example', Cookie: `podscope_token_${host.port}=${host.token}` })).status).toBe(403);
  });

  it('accepts an authenticated socket and answers on the shared channel map, events included', async () => {
    const { ws } = await openWs(`?token=${host.token}`, { Origin: origin() });
    expect(ws).toBeDefined();
    const frames: ServerFrame[] = [];
    ws!.on('message', (d) => frames.push(JSON.parse(d.toString()) as ServerFrame));
    const waitFor = async (pred: (f: ServerFrame) => boolean) => {
      for (let i = 0; i < 100 && !frames.some(pred); i++) await new Promise((r) => setTimeout(r, 20));
      return frames.find(pred);
    };
    ws!.send(
      JSON.stringify({
        t: 'req',
        id: 1,
        channel: 'sandbox.run',
        payload: { request: { config: { metadata: { name: 'a', namespace: 'b', uid: 'c' } } } },
      }),
    );
    const res = await waitFor((f) => f.t === 'res' && f.id === 1);
    expect(res).toMatchObject({ reply: { ok: true, result: { id: expect.any(String) } } });
    expect(await waitFor((f) => f.t === 'event' && f.event.kind === 'sandbox' && f.event.event.type === 'sandbox.added')).toBeDefined();
    ws!.send(JSON.stringify({ t: 'req', id: 2, channel: 'sandbox.status', payload: { id: 42 } }));
    expect(await waitFor((f) => f.t === 'res' && f.id === 2)).toMatchObject({ reply: { ok: false, error: { code: 'InvalidArgument' } } });
    ws!.close();
  });
});
