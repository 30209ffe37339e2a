/**
 * The pause rootfs, built from the host's static busybox instead of pulling registry.k8s.io/pause: a tiny tree whose
 * /pause is a busybox-sh script that behaves like the real pause binary (docs/semantics.md#pause-process): it exits 0 on SIGTERM/SIGINT and,
 * as PID 1 of the pod's PID namespace, reaps every orphan reparented to it.
 *
 * One tree is shared by every sandbox (runc bind-mounts it read-only per container), so it is built once, into a
 * temporary sibling directory that is renamed into place: a concurrent engine sees either no tree or a whole one.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { chmod, copyFile, mkdir, open, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';

export const PAUSE_ENTRYPOINT = '/pause';
/** the FIFO the pause's sleeper blocks on (see PAUSE_SCRIPT) */
const PAUSE_FIFO = '/pause.wait';
/** bump when the tree below changes, so existing installations are rebuilt */
const LAYOUT_VERSION = 2;
const MARKER = 'etc/podscope-pause-version';

/**
 * `wait` in busybox ash reaps any child (waitpid(-1)), so orphans are collected while it waits for the sleeper.
 * A trapped signal interrupts `wait`, which is how TERM/INT get handled promptly. Killing the sleeper matters only
 * with the host PID namespace; in the pod's own one the kernel kills everything when PID 1 exits.
 * The sleeper is `cat` on a FIFO in the tree that nobody writes to (opening it blocks), not `sleep`: the containers
 * share this PID namespace and should not see a process named like theirs (critest's ExecSync-timeout spec checks that
 * `pgrep sleep` is empty after its `sleep` timed out). Made at build time: the pause runs as 65535 on a read-only root.
 * `sleep inf` remains the fallback if the FIFO is missing.
 */
const PAUSE_SCRIPT = `#!/bin/sh
# podscope pause (layout ${LAYOUT_VERSION})
if [ "$1" = "-v" ]; then echo "podscope-pause ${LAYOUT_VERSION} (busybox sh)"; exit 0; fi
trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM INT
fifo=${PAUSE_FIFO}
while :; do
  if [ -p "$fifo" ]; then cat "$fifo" & else sleep inf & fi
  sleeper=$!
  wait "$sleeper"
done
`;

/** Directories and files runc mounts over; present in advance because the root is read-only and shared. */
const MOUNT_POINT_DIRS = ['proc', 'sys', 'dev', 'etc', 'bin'];
const MOUNT_POINT_FILES = ['etc/resolv.conf'];
const BUSYBOX_APPLETS = ['sh', 'sleep', 'cat'];

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

async function buildTree(dir: string, busyboxPath: string, marker: string): Promise<void> {
  // Every mode is set with chmod: mkdir/writeFile modes pass through the process umask, and a umask like 027 would
  // leave a tree the pause user (65535) cannot traverse — runc then "starts" a container that dies at once.
  const mkdirExact = async (p: string) => {
    await mkdir(p, { mode: 0o755 });
    await chmod(p, 0o755);
  };
  const writeExact = async (p: string, content: string, mode: number) => {
    await writeFile(p, content);
    await chmod(p, mode);
  };
  await mkdirExact(dir);
  for (const d of MOUNT_POINT_DIRS) await mkdirExact(join(dir, d));
  for (const f of MOUNT_POINT_FILES) await writeExact(join(dir, f), '', 0o644);
  await copyFile(busyboxPath, join(dir, 'bin/busybox'));
  await chmod(join(dir, 'bin/busybox'), 0o755);
  for (const applet of BUSYBOX_APPLETS) await symlink('busybox', join(dir, 'bin', applet));
  await writeExact(join(dir, PAUSE_ENTRYPOINT), PAUSE_SCRIPT, 0o755);
  // Node has no mkfifo; the busybox being copied has one
  await promisify(execFile)(busyboxPath, ['mkfifo', '-m', '0644', join(dir, PAUSE_FIFO)]);
  await chmod(join(dir, PAUSE_FIFO), 0o644);
  await writeExact(join(dir, MARKER), marker, 0o644);
}

function isDirTaken(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST';
}

/**
 * Returns the directory of the current pause tree: `<rootfsDir>/<hash of layout + busybox identity>`. A new busybox
 * or layout gets a new directory; an old one is never replaced in place, because unlinking a directory that is a
 * mount point in a running pause container's mount namespace would detach its /proc, /dev and resolv.conf.
 * Old versions are left for an operator to delete once no sandbox uses them (they are ~2 MB).
 */
export async function ensurePauseRootfs(options: PauseRootfsOptions): Promise<string> {
  const { rootfsDir } = options;
  const busyboxPath = options.busyboxPath ?? '/bin/busybox';
  try {
    const marker = await wantedMarker(busyboxPath);
    const versionDir = join(rootfsDir, createHash('sha256').update(marker).digest('hex').slice(0, 16));
    const found = await readFile(join(versionDir, MARKER), 'utf8').catch(() => undefined);
    if (found === marker) return versionDir;
    // A tree of this version that says something else was damaged: it is left alone (a pause may still use it)
    // and a fresh one is built beside it.
    const target = found === undefined ? versionDir : `${versionDir}-${randomBytes(4).toString('hex')}`;
    await assertStaticElf(busyboxPath);
    await mkdir(rootfsDir, { recursive: true, mode: 0o755 });
    const tmp = join(rootfsDir, `.tmp-${randomBytes(6).toString('hex')}`);
    try {
      await buildTree(tmp, busyboxPath, marker);
      // atomic: a concurrent engine sees no tree or a whole one; if it installed the same version first, ours goes
      await rename(tmp, target).catch((e: unknown) => {
        if (!isDirTaken(e)) throw e;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return target;
  } catch (e) {
    throw new PodscopeError('RuntimeError', `cannot build the pause rootfs in ${rootfsDir} from ${busyboxPath}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}
