/**
 * Creating the CRI socket without giving other local users a way in (see the comment in index.ts):
 *  - prepareSocketDir: the socket's directory (created 0755 when missing) and every directory above it must be owned
 *    by this uid or root; the directory itself must not be writable by group or others, an ancestor only if sticky
 *    (like /tmp). Otherwise a user who can write there could replace the socket with a symlink, or pre-create names.
 *  - clearStaleSocket: a leftover socket from a dead server is removed, a live one is left alone; the probe has a
 *    deadline, so a socket nobody accepts on cannot hang startup.
 *  - bindPrivately: listen in a fresh 0700 directory next to the final path, set owner (lchown) and mode there,
 *    check with lstat that it is our socket, then hard-link it into place (fails rather than replacing anything) —
 *    so the socket is never reachable with the wrong mode, and no chmod/chown can be redirected through a symlink.
 */
import { chmod, link, lchown, lstat, mkdir, mkdtemp, realpath, rmdir, unlink } from 'node:fs/promises';
import { connect, type Server as NetServer } from 'node:net';
import { dirname, join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';

/** sun_path is 108 bytes including the terminating NUL. */
const SUN_PATH_MAX = 107;

const euid = () => process.geteuid?.() ?? process.getuid?.() ?? 0;

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

/** Creates the socket's directory when missing and refuses one another user could tamper with. */
export async function prepareSocketDir(socketPath: string): Promise<void> {
  const dir = dirname(socketPath);
  try {
    await mkdir(dir, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw new PodscopeError('FailedPrecondition', `cannot create the CRI socket directory ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const real = await realpath(dir);
  const uid = euid();
  const refuse = (path: string, why: string) =>
    new PodscopeError(
      'FailedPrecondition',
      `refusing to create the CRI socket ${socketPath}: ${path === dir ? '' : `${path} (above ${dir}) `}${why}; ` +
        'the socket directory must be owned by this user or root and writable by nobody else (e.g. chmod go-w), and so must every directory above it unless sticky',
      { details: { socketPath, directory: path } },
    );
  for (let p = real, first = true; ; first = false) {
    const st = await lstat(p);
    const shown = first ? dir : p;
    if (!st.isDirectory()) throw refuse(shown, 'is not a directory');
    if (st.uid !== uid && st.uid !== 0) throw refuse(shown, `is owned by uid ${st.uid}, not by uid ${uid} or root`);
    const othersWrite = (st.mode & 0o022) !== 0;
    if (othersWrite && (first || (st.mode & 0o1000) === 0)) {
      throw refuse(shown, `is writable by ${st.mode & 0o002 ? 'all users' : 'its group'} (mode ${octal(st.mode)})`);
    }
    const parent = dirname(p);
    if (parent === p) break;
    p = parent;
  }
}

type Probe = { kind: 'alive' } | { kind: 'refused' } | { kind: 'gone' } | { kind: 'timeout' } | { kind: 'error'; code: string };

function probe(path: string, timeoutMs: number): Promise<Probe> {
  return new Promise((resolve) => {
    const s = connect(path);
    const done = (r: Probe) => {
      clearTimeout(timer);
      s.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ kind: 'timeout' }), timeoutMs);
    s.once('connect', () => done({ kind: 'alive' }));
    s.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED') done({ kind: 'refused' });
      else if (e.code === 'ENOENT') done({ kind: 'gone' });
      else done({ kind: 'error', code: e.code ?? e.message });
    });
  });
}

/** A leftover socket file from a dead server is removed; a live (or undecidable) one means someone else serves it. */
export async function clearStaleSocket(path: string, timeoutMs: number): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return;
  if (!st.isSocket()) throw new PodscopeError('FailedPrecondition', `${path} exists and is not a socket; refusing to replace it`);
  const r = await probe(path, timeoutMs);
  if (r.kind === 'gone') return;
  if (r.kind === 'alive') throw new PodscopeError('AlreadyExists', `another process is already serving ${path}`);
  if (r.kind === 'timeout')
    throw new PodscopeError(
      'AlreadyExists',
      `${path} is held by another process (it did not accept a connection within ${timeoutMs} ms); refusing to replace it`,
    );
  // EAGAIN: its listen backlog is full, so something listens there
  if (r.kind === 'error')
    throw new PodscopeError(
      'AlreadyExists',
      `${path} is held by another process (connecting failed with ${r.code}); refusing to replace it`,
    );
  await unlink(path);
}

/** Identity of the socket file this server created, so close() removes that file and nothing else. */
export interface BoundSocket {
  dev: number;
  ino: number;
}

function listen(listener: NetServer, path: string, shown: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(new PodscopeError('Unavailable', `cannot listen on ${shown}: ${err.message}`, { cause: err }));
    listener.once('error', onError);
    listener.listen(path, () => {
      listener.off('error', onError);
      resolve();
    });
  });
}

/** Our socket at `path` (lstat: a symlink or someone else's file fails) ⇒ its identity. */
async function ownSocket(path: string): Promise<BoundSocket> {
  const st = await lstat(path);
  if (!st.isSocket() || st.uid !== euid())
    throw new PodscopeError(
      'Internal',
      `${path} is not the socket this server just bound (${st.isSocket() ? `owned by uid ${st.uid}` : 'not a socket'})`,
    );
  return { dev: st.dev, ino: st.ino };
}

async function setAccess(path: string, access: { mode: number; group?: number }): Promise<void> {
  if (access.group !== undefined) await lchown(path, euid(), access.group);
  // chmod follows symlinks; `path` was just checked with lstat, in a directory only this user can write
  await chmod(path, access.mode);
}

/** Binds `listener` to `socketPath` with owner/mode already set when the path appears (see the module comment). */
export async function bindPrivately(
  listener: NetServer,
  socketPath: string,
  access: { mode: number; group?: number },
): Promise<BoundSocket> {
  const dir = dirname(socketPath);
  const privateDir = await mkdtemp(join(dir, '.cri-'));
  const tmpSock = join(privateDir, 's');
  if (Buffer.byteLength(tmpSock) > SUN_PATH_MAX) {
    // No room for the private detour below the sun_path limit: bind in place. The directory checks above still
    // keep other users from touching the path; only the moment between bind and chmod has the umask's mode.
    await rmdir(privateDir);
    await listen(listener, socketPath, socketPath);
    const id = await ownSocket(socketPath);
    await setAccess(socketPath, access);
    return id;
  }
  try {
    await listen(listener, tmpSock, socketPath);
    const id = await ownSocket(tmpSock);
    await setAccess(tmpSock, access);
    try {
      await link(tmpSock, socketPath);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST')
        throw new PodscopeError('AlreadyExists', `${socketPath} was created by another process while this server started`);
      throw new PodscopeError('Unavailable', `cannot put the CRI socket at ${socketPath}: ${(e as Error).message}`, { cause: e });
    }
    const placed = await ownSocket(socketPath);
    if (placed.ino !== id.ino || placed.dev !== id.dev)
      throw new PodscopeError('Internal', `${socketPath} is not the socket this server bound`);
    return id;
  } finally {
    await unlink(tmpSock).catch(() => undefined);
    await rmdir(privateDir).catch(() => undefined);
  }
}

/** Removes the socket file if it is still the one this server created. */
export async function removeOwnSocket(socketPath: string, bound: BoundSocket): Promise<void> {
  const st = await lstat(socketPath).catch(() => undefined);
  if (st?.isSocket() && st.ino === bound.ino && st.dev === bound.dev) await unlink(socketPath).catch(() => undefined);
}
