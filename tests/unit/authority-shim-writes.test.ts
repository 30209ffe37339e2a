/**
 * Server→client bytes through the authority shim: HTTP/2 hands them over as a corked batch of buffers, and the shim
 * passes them to the socket as one corked batch too (one writev). Every byte must arrive, in order, and every
 * write's callback must run, whether the buffers come one by one or as a batch.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { authorityFixingStream } from '../../electron/cri/server/authority-shim';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** a connected pair over a unix socket: the server side wrapped in the shim, the client side plain */
async function pair(): Promise<{ shim: ReturnType<typeof authorityFixingStream>; serverSocket: Socket; client: Socket }> {
  const dir = await mkdtemp(join(tmpdir(), 'podscope-shim-writes-'));
  const path = join(dir, 's.sock');
  let serverSocket!: Socket;
  const accepted = new Promise<void>((resolve) => {
    const server = createServer((s) => {
      serverSocket = s;
      resolve();
    });
    server.listen(path);
    cleanups.push(async () => {
      serverSocket?.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(dir, { recursive: true, force: true });
    });
  });
  const client = createConnection(path);
  cleanups.push(async () => void client.destroy());
  await accepted;
  return { shim: authorityFixingStream(serverSocket), serverSocket, client };
}

function received(client: Socket, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  return new Promise((resolve) => {
    client.on('data', (c: Buffer) => {
      chunks.push(c);
      n += c.length;
      if (n >= bytes) resolve(Buffer.concat(chunks));
    });
  });
}

it('a corked batch of 200 buffers (1 MiB) reaches the peer whole and in order, every callback called once', async () => {
  const { shim, client } = await pair();
  const parts = Array.from({ length: 200 }, (_, i) => Buffer.alloc(i % 2 ? 9 : 10_476, i & 0xff));
  const total = parts.reduce((n, p) => n + p.length, 0);
  const got = received(client, total);
  const called: number[] = [];
  shim.cork();
  parts.forEach((p, i) => shim.write(p, () => called.push(i)));
  process.nextTick(() => shim.uncork());
  expect((await got).equals(Buffer.concat(parts))).toBe(true);
  await expect.poll(() => called.length).toBe(parts.length);
  expect(called).toEqual(parts.map((_, i) => i));
});

it('single writes and batches mixed arrive in the order they were written', async () => {
  const { shim, client } = await pair();
  const parts = Array.from({ length: 30 }, (_, i) => Buffer.from(`part-${i};`));
  const got = received(
    client,
    parts.reduce((n, p) => n + p.length, 0),
  );
  for (let i = 0; i < parts.length; i++) {
    if (i % 5 === 0) shim.cork();
    shim.write(parts[i]!);
    if (i % 5 === 4) shim.uncork();
  }
  expect((await got).toString()).toBe(parts.map(String).join(''));
});

it('a batch written after the socket closed fails its callbacks instead of hanging', async () => {
  const { shim, serverSocket } = await pair();
  serverSocket.destroy();
  await new Promise((r) => setImmediate(r));
  const errors: unknown[] = [];
  shim.on('error', () => undefined);
  shim.cork();
  shim.write(Buffer.from('a'), (e) => errors.push(e));
  shim.write(Buffer.from('b'), (e) => errors.push(e));
  shim.uncork();
  await expect.poll(() => errors.length).toBe(2);
  expect(errors.every((e) => e instanceof Error)).toBe(true);
});
