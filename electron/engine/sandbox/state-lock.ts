/**
 * One engine per state dir. The lock is an abstract unix socket named after the state dir's real path: binding it
 * is atomic, and the kernel releases it when the holder dies however it dies, so there is no stale lock to detect
 * (a pid file survives reboots and pid reuse; an O_EXCL file has a window where it exists but is empty).
 * A pid file next to the state is written only to name the holder in the error.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';

export class StateDirLock {
  private constructor(
    private readonly server: Server,
    private readonly pidFile: string,
  ) {}

  static async acquire(stateDir: string): Promise<StateDirLock> {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const real = await realpath(stateDir);
    const name = `\0podscope-engine-${createHash('sha256').update(real).digest('hex').slice(0, 32)}`;
    const pidFile = join(stateDir, 'engine.pid');
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ path: name, exclusive: true }, () => resolve());
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
      const owner = (await readFile(pidFile, 'utf8').catch(() => '')).trim() || 'unknown';
      throw new PodscopeError('FailedPrecondition', `state dir ${stateDir} is in use by another Podscope engine (pid ${owner}); stop it, talk to it through its CRI socket (--endpoint), or use another --state-dir`, {
        details: { stateDir, ownerPid: owner },
      });
    }
    server.unref(); // holding the lock must not keep a CLI process alive
    await writeFile(pidFile, `${process.pid}\n`, { mode: 0o600 });
    return new StateDirLock(server, pidFile);
  }

  async release(): Promise<void> {
    if (!this.server.listening) return;
    await rm(this.pidFile, { force: true });
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
