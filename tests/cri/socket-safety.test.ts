/**
 * Where and how the CRI socket is created: a directory another user could write to is refused (they could swap the
 * socket for a symlink that chmod/chown would follow, e.g. to /etc/shadow); the socket never appears with the wrong
 * mode; the stale-socket probe cannot hang on, or delete, a socket something still listens on.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer } from '../../electron/cri/server';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { rawClient, rpc, tempDir } from './helpers/grpc';

// one real engine (touch points faked) behind every server here: these tests are about the socket, not the engine
let fakes: TestEngine;
beforeAll(async () => {
  fakes = await createTestEngine();
});
afterAll(async () => {
  await fakes?.close();
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const dirFor = (prefix: string) => {
  const t = tempDir(prefix);
  cleanups.push(() => t.cleanup());
  return t.dir;
};

describe('the socket directory', () => {
  it('mkdtemp dirs (0700, under sticky /tmp) are accepted: socket 0660, no private dir left behind', async () => {
    const dir = dirFor('podscope-sock-ok-');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const server = await startCriServer({ engine: fakes.engine, socketPath: join(dir, 'sub', 'cri.sock'), group: 4242 });
    cleanups.push(() => server.close());
    const st = lstatSync(server.socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o660);
    expect(st.gid).toBe(4242);
    expect(readdirSync(join(dir, 'sub'))).toEqual(['cri.sock']);
    const c = rawClient(server.socketPath);
    try {
      expect((await rpc(c, (x) => x.version, { version: '0.1.0' })).runtimeName).toBe('podscope');
    } finally {
      c.close();
    }
    await server.close();
    expect(existsSync(server.socketPath)).toBe(false);
  });

  it('a world-writable or group-writable parent is refused with FailedPrecondition, and nothing is created in it', async () => {
    for (const mode of [0o777, 0o1777, 0o770]) {
      const dir = dirFor('podscope-sock-ww-');
      const parent = join(dir, 'shared');
      mkdirSync(parent);
      chmodSync(parent, mode);
      await expect(startCriServer({ engine: fakes.engine, socketPath: join(parent, 'cri.sock') })).rejects.toMatchObject({
        code: 'FailedPrecondition',
        message: expect.stringMatching(new RegExp(`${parent}.*writable by (all users|its group)`)),
      });
      expect(readdirSync(parent)).toEqual([]);
    }
  });

  it('a parent owned by another user is refused', async () => {
    const dir = dirFor('podscope-sock-owner-');
    const parent = join(dir, 'theirs');
    mkdirSync(parent, { mode: 0o755 });
    chownSync(parent, 65534, 65534);
    await expect(startCriServer({ engine: fakes.engine, socketPath: join(parent, 'cri.sock') })).rejects.toMatchObject({
      code: 'FailedPrecondition',
      message: expect.stringContaining('owned by uid 65534'),
    });
  });

  it('a world-writable, non-sticky directory higher up is refused too (it could swap the whole subtree)', async () => {
    const dir = dirFor('podscope-sock-anc-');
    const open = join(dir, 'open');
    mkdirSync(join(open, 'mine'), { recursive: true });
    chmodSync(open, 0o777);
    await expect(startCriServer({ engine: fakes.engine, socketPath: join(open, 'mine', 'cri.sock') })).rejects.toMatchObject({
      code: 'FailedPrecondition',
      message: expect.stringContaining(`${open} (above`),
    });
  });

  it('a symlink at the socket path is refused and its target left alone', async () => {
    const dir = dirFor('podscope-sock-link-');
    const target = join(dir, 'precious');
    writeFileSync(target, 'x', { mode: 0o600 });
    symlinkSync(target, join(dir, 'cri.sock'));
    await expect(startCriServer({ engine: fakes.engine, socketPath: join(dir, 'cri.sock'), mode: 0o666 })).rejects.toMatchObject({
      code: 'FailedPrecondition',
    });
    expect(statSync(target).mode & 0o777).toBe(0o600);
  });

  it('a relative --socket is resolved against the cwd; unix:// spellings are normalised', async () => {
    const dir = dirFor('podscope-sock-rel-');
    const server = await startCriServer({ engine: fakes.engine, socketPath: `unix://${dir}//./a/../cri.sock` });
    cleanups.push(() => server.close());
    expect(server.socketPath).toBe(join(dir, 'cri.sock'));
  });
});

describe('an existing socket at the path', () => {
  it('a stale one (its server was killed) is replaced', async () => {
    const dir = dirFor('podscope-sock-stale-');
    const path = join(dir, 'cri.sock');
    const child = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((r) => child.stdout!.once('data', () => r()));
    process.kill(child.pid!, 'SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(lstatSync(path).isSocket()).toBe(true);
    const server = await startCriServer({ engine: fakes.engine, socketPath: path });
    cleanups.push(() => server.close());
    expect(lstatSync(path).mode & 0o777).toBe(0o660);
  });

  it('a live one whose backlog is full is neither waited on forever nor deleted', async () => {
    const dir = dirFor('podscope-sock-backlog-');
    const path = join(dir, 'busy.sock');
    // a listener that never accepts, backlog 0
    const py = spawn(
      'python3',
      [
        '-c',
        `import socket,sys,time\ns=socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1])\ns.listen(0)\nprint('up',flush=True)\ntime.sleep(120)`,
        path,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    cleanups.push(() => {
      py.kill('SIGKILL');
    });
    await new Promise<void>((r) => py.stdout!.once('data', () => r()));
    // fill the backlog
    const fillers: Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const s = connect(path);
      s.on('error', () => undefined);
      fillers.push(s);
    }
    cleanups.push(() => {
      for (const s of fillers) s.destroy();
    });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await expect(startCriServer({ engine: fakes.engine, socketPath: path, staleProbeTimeoutMs: 500 })).rejects.toMatchObject({
      code: 'AlreadyExists',
    });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(lstatSync(path).isSocket()).toBe(true);
  });
});
