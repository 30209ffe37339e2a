/**
 * endpoints.add dials only an existing unix socket, and its refusal says which check failed without telling a
 * browser-mode token holder anything about the path: missing, a regular file, a directory, a FIFO, a symlink (even
 * to a live socket) and a path under a regular file all get the same message, and nothing is dialed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { checkEndpointSocket, NOT_A_SOCKET } from '../../electron/cri/client/socket-check';
import { createEndpointRegistry } from '../../electron/endpoints';
import { PodscopeError } from '../../shared/domain/errors';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { tempDir } from './helpers/grpc';

const tmp = tempDir('podscope-r3-sockcheck-');
let fakes: TestEngine;
let cri: CriServer;
/** a listening unix socket that counts every connection it is offered */
let plain: Server;
let plainConnections = 0;
const paths: Record<string, string> = {};

beforeAll(async () => {
  fakes = await createTestEngine();
  cri = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock') });
  plain = createServer((s) => {
    plainConnections++;
    s.destroy();
  });
  await new Promise<void>((r) => plain.listen(join(tmp.dir, 'plain.sock'), r));
  paths.missing = join(tmp.dir, 'missing.sock');
  paths['a regular file'] = join(tmp.dir, 'file');
  writeFileSync(paths['a regular file'], 'x');
  paths['a directory'] = join(tmp.dir, 'dir');
  mkdirSync(paths['a directory']);
  paths['a FIFO'] = join(tmp.dir, 'fifo');
  execFileSync('mkfifo', [paths['a FIFO']]);
  paths['a symlink to a listening socket'] = join(tmp.dir, 'link.sock');
  symlinkSync(join(tmp.dir, 'plain.sock'), paths['a symlink to a listening socket']);
  paths['a symlink to the CRI socket'] = join(tmp.dir, 'cri-link.sock');
  symlinkSync(join(tmp.dir, 'cri.sock'), paths['a symlink to the CRI socket']);
  paths['a path below a regular file'] = join(tmp.dir, 'file', 'x.sock');
});

afterAll(async () => {
  await cri?.close();
  await fakes?.close();
  await new Promise<void>((r) => (plain ? plain.close(() => r()) : r()));
  tmp.cleanup();
});

describe('checkEndpointSocket', () => {
  it('accepts a unix socket', async () => {
    await expect(checkEndpointSocket(cri.socketPath)).resolves.toBeUndefined();
  });

  it.each(['missing', 'a regular file', 'a directory', 'a FIFO', 'a symlink to a listening socket', 'a path below a regular file'])(
    'refuses %s with the one message',
    async (kind) => {
      const p = paths[kind]!;
      const e = await checkEndpointSocket(p).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(PodscopeError);
      expect((e as PodscopeError).code).toBe('Unavailable');
      // identical text once the path is taken out: nothing reveals what (if anything) is there
      expect((e as PodscopeError).message.replace(p, '<path>')).toBe(
        `cannot use CRI endpoint <path>: ${NOT_A_SOCKET} (give the runtime's socket path itself, not a link to it)`,
      );
    },
  );
});

describe('endpoints.add', () => {
  it('refuses every non-socket path with the same answer and dials none of them', async () => {
    const reg = createEndpointRegistry({ local: fakes.engine, connectTimeoutMs: 1000 });
    try {
      const messages = new Set<string>();
      for (const [kind, p] of Object.entries(paths)) {
        const e = await reg.add({ address: p }).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(e, kind).toBeInstanceOf(PodscopeError);
        expect((e as PodscopeError).code, kind).toBe('Unavailable');
        messages.add((e as PodscopeError).message.replace(p, '<path>'));
      }
      expect([...messages]).toEqual([
        `cannot use CRI endpoint <path>: ${NOT_A_SOCKET} (give the runtime's socket path itself, not a link to it)`,
      ]);
      expect(plainConnections).toBe(0);
      expect((await reg.list()).map((v) => v.id)).toEqual(['local']);
      // the socket itself is accepted
      expect((await reg.add({ address: cri.socketPath })).connected).toBe(true);
    } finally {
      reg.close();
    }
  });
});
