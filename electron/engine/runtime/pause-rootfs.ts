/**
 * The pause rootfs, built from the host's static busybox instead of pulling registry.k8s.io/pause: a tiny tree whose
 * /pause is a busybox-sh script that behaves like the real pause binary (FACTS D4): it exits 0 on SIGTERM/SIGINT and,
 * as PID 1 of the pod's PID namespace, reaps every orphan reparented to it.
 *
 * One tree is shared by every sandbox (runc bind-mounts it read-only per container), so it is built once, into a
 * temporary sibling directory that is renamed into place: a concurrent engine sees either no tree or a whole one.
 */
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, open, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';

export const PAUSE_ENTRYPOINT = '/pause';
/** bump when the tree below changes, so existing installations are rebuilt */
const LAYOUT_VERSION = 1;
const MARKER = 'etc/podscope-pause-version';

/**
 * `wait` in busybox ash reaps any child (waitpid(-1)), so orphans are collected while it waits for the sleeper.
 * A trapped signal interrupts `wait`, which is how TERM/INT get handled promptly. Killing the sleeper matters only
 * with the host PID namespace; in the pod's own one the kernel kills everything when PID 1 exits.
 */
const PAUSE_SCRIPT = `#!/bin/sh
# podscope pause (layout ${LAYOUT_VERSION})
if [ "$1" = "-v" ]; then echo "podscope-pause ${LAYOUT_VERSION} (busybox sh)"; exit 0; fi
trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM INT
while :; do
  sleep inf &
  sleeper=$!
  wait "$sleeper"
done
`;

/** Directories and files runc mounts over; present in advance because the root is read-only and shared. */
const MOUNT_POINT_DIRS = ['proc', 'sys', 'dev', 'etc', 'bin'];
const MOUNT_POINT_FILES = ['etc/resolv.conf'];
const BUSYBOX_APPLETS = ['sh', 'sleep'];

export interface PauseRootfsOptions {
  /** where the tree lives, e.g. `<stateDir>/pause/rootfs` */
  rootfsDir: string;
  /** a statically linked busybox (Debian: busybox-static) */
  busyboxPath?: string;
}

/** A dynamically linked busybox would fail inside the container with a bare ENOENT; say why up front. */
async function assertStaticElf(path: string): Promise<void> {
  const file = await open(path, 'r');
  try {
    const header = Buffer.alloc(64);
    await file.read(header, 0, 64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2) throw new Error('not a 64-bit ELF executable');
    const phoff = Number(header.readBigUInt64LE(32));
    const phentsize = header.readUInt16LE(54);
    const phnum = header.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    await file.read(table, 0, table.length, phoff);
    const PT_INTERP = 3;
    for (let i = 0; i < phnum; i++) {
      if (table.readUInt32LE(i * phentsize) === PT_INTERP) throw new Error('dynamically linked (install busybox-static)');
    }
  } finally {
    await file.close();
  }
}

/** What the marker must say: layout version plus the busybox identity, so a busybox upgrade rebuilds too. */
async function wantedMarker(busyboxPath: string): Promise<string> {
  const s = await stat(busyboxPath);
  return `layout=${LAYOUT_VERSION} busybox=${s.size}-${Math.trunc(s.mtimeMs)}\n`;
}

async function currentMarker(rootfsDir: string): Promise<string | undefined> {
  return readFile(join(rootfsDir, MARKER), 'utf8').catch(() => undefined);
}

async function buildTree(dir: string, busyboxPath: string, marker: string): Promise<void> {
  await mkdir(dir, { mode: 0o755 });
  await chmod(dir, 0o755);
  for (const d of MOUNT_POINT_DIRS) await mkdir(join(dir, d), { mode: 0o755 });
  for (const f of MOUNT_POINT_FILES) await writeFile(join(dir, f), '', { mode: 0o644 });
  await copyFile(busyboxPath, join(dir, 'bin/busybox'));
  await chmod(join(dir, 'bin/busybox'), 0o755);
  for (const applet of BUSYBOX_APPLETS) await symlink('busybox', join(dir, 'bin', applet));
  await writeFile(join(dir, PAUSE_ENTRYPOINT), PAUSE_SCRIPT, { mode: 0o755 });
  await writeFile(join(dir, MARKER), marker, { mode: 0o644 });
}

function isDirTaken(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST';
}

/** Returns rootfsDir after making sure it holds the current pause tree. */
export async function ensurePauseRootfs(options: PauseRootfsOptions): Promise<string> {
  const { rootfsDir } = options;
  const busyboxPath = options.busyboxPath ?? '/bin/busybox';
  try {
    const marker = await wantedMarker(busyboxPath);
    if ((await currentMarker(rootfsDir)) === marker) return rootfsDir;
    await assertStaticElf(busyboxPath);
    await mkdir(dirname(rootfsDir), { recursive: true, mode: 0o755 });
    const tmp = `${rootfsDir}.tmp-${randomBytes(6).toString('hex')}`;
    try {
      await buildTree(tmp, busyboxPath, marker);
      await install(tmp, rootfsDir, marker);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return rootfsDir;
  } catch (e) {
    throw new PodscopeError('RuntimeError', `cannot build the pause rootfs in ${rootfsDir} from ${busyboxPath}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * rename(2) onto an existing non-empty directory fails, so an outdated tree is moved aside first. If another engine
 * installs a current tree in between, ours is simply dropped.
 */
async function install(tmp: string, rootfsDir: string, marker: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await rename(tmp, rootfsDir);
      return;
    } catch (e) {
      if (!isDirTaken(e)) throw e;
    }
    if ((await currentMarker(rootfsDir)) === marker) return;
    const old = `${rootfsDir}.old-${randomBytes(6).toString('hex')}`;
    await rename(rootfsDir, old).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    });
    // A running pause process only needs what it already has open (its script, busybox), which survives removal.
    await rm(old, { recursive: true, force: true });
  }
  throw new Error('the rootfs directory kept changing while installing the new tree');
}
