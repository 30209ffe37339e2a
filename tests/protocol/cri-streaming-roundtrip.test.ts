/**
 * The CRI streaming server and client end to end over real loopback sockets, once over SPDY/3.1 (crictl's transport)
 * and once over WebSocket, with an in-test ContainerStreaming behind the server: stdin reaches the process, stdout
 * and stderr stay apart, a non-zero exit code comes back, terminal resizes arrive, port-forward carries bytes both
 * ways, and tokens are single-use, expire after a minute and are 404 when unknown.
 */
import { request } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { PassThrough, Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamingServer, type StreamingServer } from '../../electron/cri/streaming/server';
import { runPortForward, runRemoteCommand, type StreamingTransport } from '../../electron/cri/streaming/client';
import type { ResizeSource, TerminalSize } from '../../electron/engine/containers/streaming';
import { fakeStreaming, upperCaseServer, type FakeStreaming } from './streaming-fake';
import WebSocket from 'ws';
import {
  REMOTECOMMAND_V1,
  REMOTECOMMAND_V2,
  REMOTECOMMAND_V3,
  WS_BASE64_CHANNEL,
  WS_V4_CHANNEL,
} from '../../electron/cri/streaming/protocol';
import { MAX_IN_FLIGHT, TOKEN_TTL_MS, TokenCache } from '../../electron/cri/streaming/token-cache';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let fake: FakeStreaming;
let server: StreamingServer;
let clock = 0;
let pod: { port: number; server: Server };

beforeAll(async () => {
  fake = fakeStreaming();
  pod = await upperCaseServer();
  fake.ports.set(8080, pod.port);
  clock = Date.now();
  server = await startStreamingServer({ streaming: fake, tokens: { now: () => clock } });
});

afterAll(async () => {
  await server?.close();
  pod?.server.close();
});

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString() };
}

const base = { containerId: 'c1', stdin: false, stdout: true, stderr: false, tty: false };

describe.each<StreamingTransport>(['spdy', 'websocket'])('remotecommand over %s', (transport) => {
  it('exec: stdin reaches the process and its echo comes back on stdout, exit code 0', async () => {
    const url = server.getExec({ ...base, stdin: true, cmd: ['cat'] });
    const out = sink();
    // v4 WebSocket has no stdin EOF: only v5 (which this server and client speak) can end the process's stdin
    const r = await runRemoteCommand(
      url,
      { stdin: Readable.from([Buffer.from('hello '), Buffer.from('world')]), stdout: out.stream, stderr: null, tty: false },
      { transport },
    );
    expect(r.exitCode).toBe(0);
    expect(out.text()).toBe('hello world');
  });

  it('exec: stdout and stderr arrive apart, and exit code 3 is reported on the error stream', async () => {
    const url = server.getExec({ ...base, stderr: true, cmd: ['split', '3'] });
    const out = sink();
    const err = sink();
    const r = await runRemoteCommand(url, { stdin: null, stdout: out.stream, stderr: err.stream, tty: false }, { transport });
    expect(r.exitCode).toBe(3);
    expect(out.text()).toBe('to stdout\n');
    expect(err.text()).toBe('to stderr\n');
  });

  it('exec with tty: terminal resizes reach the process in order', async () => {
    const url = server.getExec({ ...base, stderr: false, tty: true, cmd: ['resize', '2'] });
    const out = sink();
    const listeners = new Set<(s: TerminalSize) => void>();
    const resize: ResizeSource = {
      subscribe(l) {
        listeners.add(l);
        // like a terminal: the current size at once, then a change
        l({ width: 80, height: 24 });
        setTimeout(() => listeners.forEach((x) => x({ width: 132, height: 43 })), 20);
        return () => listeners.delete(l);
      },
    };
    const r = await runRemoteCommand(url, { stdin: null, stdout: out.stream, stderr: null, tty: true, resize }, { transport });
    expect(r.exitCode).toBe(0);
    expect(out.text()).toBe('size 80x24\r\nsize 132x43\r\n');
    expect(fake.calls.at(-1)?.sizes).toEqual([
      { width: 80, height: 24 },
      { width: 132, height: 43 },
    ]);
  });

  it('exec: a runtime failure before the process starts is an error, not an exit code', async () => {
    const url = server.getExec({ ...base, containerId: 'missing', cmd: ['cat'] });
    await expect(runRemoteCommand(url, { stdin: null, stdout: sink().stream, stderr: null, tty: false }, { transport })).rejects.toThrow(
      /container missing not found/,
    );
  });

  it('exec: 2 MiB of stdout arrives whole (no flow-control stall)', async () => {
    const url = server.getExec({ ...base, stderr: false, cmd: ['big', String(2 * 1024 * 1024)] });
    let n = 0;
    const out = new PassThrough();
    out.on('data', (c: Buffer) => (n += c.length));
    const r = await runRemoteCommand(url, { stdin: null, stdout: out, stderr: null, tty: false }, { transport });
    expect(r.exitCode).toBe(0);
    expect(n).toBe(2 * 1024 * 1024);
  });

  it('exec: 4 MiB of stdin is echoed back whole to a slow reader, every byte written before the session ends', async () => {
    const url = server.getExec({ ...base, stdin: true, cmd: ['cat'] });
    const input = Buffer.alloc(4 * 1024 * 1024);
    for (let i = 0; i < input.length; i++) input[i] = (i * 7) & 0xff;
    const chunks: Buffer[] = [];
    // a reader with a small buffer that drains slowly: output is held back (not dropped, not stalled for good)
    const out = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk);
        setImmediate(cb);
      },
    });
    const stdin = Readable.from(
      (function* () {
        for (let off = 0; off < input.length; off += 256 * 1024) yield input.subarray(off, off + 256 * 1024);
      })(),
    );
    const r = await runRemoteCommand(url, { stdin, stdout: out, stderr: null, tty: false }, { transport });
    expect(r.exitCode).toBe(0);
    expect(Buffer.concat(chunks).equals(input)).toBe(true);
  });

  it('attach: stdin goes to the container and its output comes back', async () => {
    const url = server.getAttach({ ...base, stdin: true, stderr: false });
    const out = sink();
    const r = await runRemoteCommand(
      url,
      { stdin: Readable.from([Buffer.from('attached')]), stdout: out.stream, stderr: null, tty: false },
      { transport },
    );
    expect(r.exitCode).toBe(0);
    expect(out.text()).toBe('attached');
  });

  it('port-forward: bytes go to the pod port and its answer comes back', async () => {
    const url = server.getPortForward({ sandboxId: 'p1', ports: [8080] });
    const { text, done } = await forwardOnce(url, 8080, 'ping through the tunnel', transport);
    expect(text).toBe('PING THROUGH THE TUNNEL');
    await done;
  });

  it('a token is single-use: the second session on the same URL is NotFound', async () => {
    const url = server.getExec({ ...base, cmd: ['split', '0'] });
    await runRemoteCommand(url, { stdin: null, stdout: sink().stream, stderr: null, tty: false }, { transport });
    await expect(
      runRemoteCommand(url, { stdin: null, stdout: sink().stream, stderr: null, tty: false }, { transport }),
    ).rejects.toMatchObject({
      code: 'NotFound',
    });
  });

  it('a token expires after one minute (kubelet cacheTTL)', async () => {
    const url = server.getExec({ ...base, cmd: ['split', '0'] });
    clock += 61_000;
    await expect(
      runRemoteCommand(url, { stdin: null, stdout: sink().stream, stderr: null, tty: false }, { transport }),
    ).rejects.toMatchObject({
      code: 'NotFound',
    });
  });
});

/** a local listener like `port-forward`'s: each accepted connection is forwarded through its own session */
async function forwardOnce(url: string, port: number, payload: string, transport: StreamingTransport) {
  let done!: Promise<void>;
  const local = createServer({ allowHalfOpen: true }, (sock) => {
    done = runPortForward(url, port, sock, { transport });
  });
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
  const c = connect({ port: (local.address() as { port: number }).port, host: '127.0.0.1', allowHalfOpen: true });
  const chunks: Buffer[] = [];
  c.on('data', (d: Buffer) => chunks.push(d));
  await new Promise<void>((r) => c.once('connect', r));
  c.write(payload);
  // SPDY half-closes and the pod answers before closing; WebSocket (no half-close) gets its answer before we end
  if (transport === 'spdy') c.end();
  else await waitFor(() => Buffer.concat(chunks).length >= payload.length);
  if (transport !== 'spdy') c.end();
  await new Promise<void>((r) => c.once('close', () => r()));
  local.close();
  return { text: Buffer.concat(chunks).toString(), done };
}

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

describe('nothing left behind', () => {
  it('every session above has closed its connection on the server', async () => {
    // sessions end asynchronously after the client has its result; a leaked socket would keep this above 0
    await waitFor(() => server.openConnections === 0);
    expect(server.openConnections).toBe(0);
  });
});

describe('HTTP surface', () => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<number>((resolve, reject) => {
      const u = new URL(server.url);
      const req = request({ host: u.hostname, port: u.port, path, headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });

  it('an unknown token is 404, with and without an upgrade', async () => {
    expect(await get('/exec/AAAAAAAA')).toBe(404);
    expect(
      await get('/exec/AAAAAAAA', { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' }),
    ).toBe(404);
    expect(await get('/nothing/here')).toBe(404);
  });

  it('a token used on the wrong verb is 404 and consumed', async () => {
    const url = new URL(server.getExec({ ...base, cmd: ['split', '0'] }));
    const token = url.pathname.split('/')[2]!;
    const h = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' };
    expect(await get(`/attach/${token}`, h)).toBe(404);
    expect(await get(`/exec/${token}`, h)).toBe(404);
  });

  it('SPDY without a common protocol version is 403 (httpstream.Handshake)', async () => {
    const url = new URL(server.getExec({ ...base, cmd: ['split', '0'] }));
    expect(await get(url.pathname, { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v9.channel.k8s.io' })).toBe(
      403,
    );
  });
});

describe('WebSocket wire details (wsstream)', () => {
  const wsUrl = (u: string) => u.replace(/^http/, 'ws');
  const open = (url: string, protocols: string[], onMessage: (d: Buffer, binary: boolean) => void) => {
    const ws = new WebSocket(wsUrl(url), protocols);
    ws.on('message', onMessage);
    return ws;
  };

  it('exec: an empty frame on the lowest writable channel first, then channel-prefixed output and the v4 Status on channel 3', async () => {
    const url = server.getExec({ ...base, stderr: true, cmd: ['split', '5'] });
    const frames: Buffer[] = [];
    const ws = open(url, [WS_V4_CHANNEL], (d) => frames.push(Buffer.from(d)));
    await new Promise((r) => ws.once('close', r));
    expect(ws.protocol).toBe(WS_V4_CHANNEL);
    expect(frames[0]).toEqual(Buffer.from([1]));
    expect(frames.slice(1, 3).map((f) => [f[0], f.subarray(1).toString()])).toEqual([
      [1, 'to stdout\n'],
      [2, 'to stderr\n'],
    ]);
    const status = JSON.parse(frames[3]!.subarray(1).toString()) as { reason: string; details: { causes: { message: string }[] } };
    expect(frames[3]![0]).toBe(3);
    expect(status.reason).toBe('NonZeroExitCode');
    expect(status.details.causes[0]!.message).toBe('5');
  });

  it('base64.channel.k8s.io: text frames with an ASCII channel digit and base64 payload; pre-v4 error is plain text', async () => {
    const url = server.getExec({ ...base, cmd: ['split', '4'] });
    const frames: string[] = [];
    const ws = open(url, [WS_BASE64_CHANNEL], (d, binary) => {
      expect(binary).toBe(false);
      frames.push(d.toString());
    });
    await new Promise((r) => ws.once('close', r));
    expect(frames[0]).toBe('1');
    expect(frames[1]).toBe(`1${Buffer.from('to stdout\n').toString('base64')}`);
    expect(frames[2]![0]).toBe('3');
    expect(Buffer.from(frames[2]!.slice(1), 'base64').toString()).toMatch(/exit code 4$/);
  });

  it('port-forward: each channel of the pair starts with the port, 2 bytes little-endian; then data flows', async () => {
    const url = `${server.getPortForward({ sandboxId: 'p1', ports: [] })}?port=8080`;
    const frames: Buffer[] = [];
    const ws = open(url, [WS_V4_CHANNEL], (d) => frames.push(Buffer.from(d)));
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => frames.length >= 2);
    expect(frames.slice(0, 2)).toEqual([Buffer.from([0, 0x90, 0x1f]), Buffer.from([1, 0x90, 0x1f])]);
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('abc')]));
    await waitFor(() => frames.length >= 3);
    expect(frames[2]).toEqual(Buffer.concat([Buffer.from([0]), Buffer.from('ABC')]));
    ws.close();
  });

  it('a subprotocol the server does not speak is refused at the handshake', async () => {
    const url = server.getExec({ ...base, cmd: ['split', '0'] });
    const before = fake.calls.length;
    const ws = new WebSocket(wsUrl(url), ['v9.channel.k8s.io']);
    ws.on('error', () => undefined);
    const code = await new Promise<number | undefined>((r) => ws.once('unexpected-response', (_req, res) => r(res.statusCode)));
    expect(code).toBe(400);
    // and nothing ran for a client that could not have read the session
    expect(fake.calls.length).toBe(before);
  });
});

describe('older remotecommand versions over SPDY (kubelet serves v1–v4)', () => {
  it.each([REMOTECOMMAND_V3, REMOTECOMMAND_V2, REMOTECOMMAND_V1])(
    '%s: output arrives and the exit code comes back as text',
    async (version) => {
      const url = server.getExec({ ...base, stderr: true, cmd: ['split', '6'] });
      const out = sink();
      const err = sink();
      const r = await runRemoteCommand(url, { stdin: null, stdout: out.stream, stderr: err.stream, tty: false }, { protocols: [version] });
      expect(r.exitCode).toBe(6);
      expect([out.text(), err.text()]).toEqual(['to stdout\n', 'to stderr\n']);
    },
  );

  it('v3 has the resize stream; v2 has none (the server does not wait for one)', async () => {
    const resize = { subscribe: (l: (s: TerminalSize) => void) => (l({ width: 10, height: 5 }), () => undefined) };
    const v3 = server.getExec({ ...base, tty: true, cmd: ['resize', '1'] });
    const out = sink();
    expect(
      (await runRemoteCommand(v3, { stdin: null, stdout: out.stream, stderr: null, tty: true, resize }, { protocols: [REMOTECOMMAND_V3] }))
        .exitCode,
    ).toBe(0);
    expect(out.text()).toBe('size 10x5\r\n');
    const v2 = server.getExec({ ...base, tty: true, cmd: ['split', '0'] });
    expect(
      (
        await runRemoteCommand(
          v2,
          { stdin: null, stdout: sink().stream, stderr: null, tty: true, resize },
          { protocols: [REMOTECOMMAND_V2] },
        )
      ).exitCode,
    ).toBe(0);
  });
});

describe('TLS (kubelet streaming server with a certificate)', () => {
  let tls: StreamingServer;
  let ca: Buffer;
  const dir = mkdtempSync(join(tmpdir(), 'pss2-tls-'));

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(join(dir, 'cert.pem'));
    tls = await startStreamingServer({ streaming: fake, tls: { cert: ca, key: readFileSync(join(dir, 'key.pem')) } });
  });

  afterAll(async () => {
    await tls?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each<StreamingTransport>(['spdy', 'websocket'])(
    '%s over TLS: https URL, verified against its CA, exit code back',
    async (transport) => {
      const url = tls.getExec({ ...base, cmd: ['split', '2'] });
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/exec\//);
      const out = sink();
      const r = await runRemoteCommand(url, { stdin: null, stdout: out.stream, stderr: null, tty: false }, { transport, ca });
      expect(r.exitCode).toBe(2);
      expect(out.text()).toBe('to stdout\n');
    },
  );

  it('a client that does not trust the certificate gets no session', async () => {
    const url = tls.getExec({ ...base, cmd: ['split', '0'] });
    await expect(runRemoteCommand(url, { stdin: null, stdout: sink().stream, stderr: null, tty: false })).rejects.toMatchObject({
      code: 'Unavailable',
    });
  });
});

describe('idle sessions', () => {
  it.each<StreamingTransport>(['spdy', 'websocket'])(
    '%s: a session without traffic past the idle timeout is closed and its process aborted',
    async (transport) => {
      const idle = await startStreamingServer({ streaming: fake, idleTimeoutMs: 300 });
      try {
        const url = idle.getExec({ ...base, cmd: ['wait-abort'] });
        await expect(
          runRemoteCommand(url, { stdin: null, stdout: sink().stream, stderr: null, tty: false }, { transport }),
        ).rejects.toThrow();
        // the fake's "wait-abort" only returns once the session's signal fired
        await waitFor(() => idle.openConnections === 0);
      } finally {
        await idle.close();
      }
    },
  );
});

describe('token cache limits', () => {
  it('at most 1000 tokens are outstanding (then Unavailable); expired ones free their place', () => {
    let now = 0;
    const cache = new TokenCache<number>({ now: () => now });
    for (let i = 0; i < MAX_IN_FLIGHT; i++) cache.insert(i);
    expect(() => cache.insert(-1)).toThrow(/in-flight/);
    now += TOKEN_TTL_MS + 1;
    expect(cache.size).toBe(0);
    const t = cache.insert(7);
    expect(t).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(cache.consume(t)).toBe(7);
    expect(cache.consume(t)).toBeUndefined();
  });
});
