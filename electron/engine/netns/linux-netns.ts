/**
 * Network namespaces pinned on files, the containerd pkg/netns way: `<dir>/cni-<uuid-like>` is created with O_EXCL,
 * then a new net namespace is bind-mounted on it. The pinning is done by util-linux `unshare --net=<file> true`:
 * it works for any directory (tests use temporary ones), whereas `ip netns add` is ~1.5 ms cheaper but hard-wired to
 * /var/run/netns and creates the file itself.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, realpath, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { runChecked, type ProcessRunner } from '../os/exec';
import type { NetnsManager } from './types';
import { mountAt, readMountAt, readMountInfo, type MountEntry } from './mountinfo';

export interface LinuxNetnsOptions {
  /** per-command timeout (unshare, mount, umount) */
  timeoutMs?: number;
  /** a read-only engine (CLI `pods`/`inspectp`): never creates, unmounts or deletes anything, not even a stale file */
  readOnly?: boolean;
}

const NETNS_PREFIX = 'cni-';

/** 16 random bytes printed 4-2-2-2-6 as hex, like containerd's names (they look like UUIDs but are not versioned). */
export function newNetnsName(bytes: Buffer = randomBytes(16)): string {
  const hex = bytes.toString('hex');
  return `${NETNS_PREFIX}${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A namespace file is pinned when an nsfs mount sits on it (kernels before 3.19 report such mounts as `proc`). */
function isNamespaceMount(entry: MountEntry | undefined): boolean {
  return entry !== undefined && (entry.fsType === 'nsfs' || entry.fsType === 'proc');
}

function isErrno(e: unknown, code: string): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === code;
}

async function realpathOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined;
    throw e;
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw e;
  }
}

export class LinuxNetnsManager implements NetnsManager {
  private readonly timeoutMs: number;
  private readonly readOnly: boolean;
  private dirReady: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    private readonly runner: ProcessRunner,
    options: LinuxNetnsOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.readOnly = options.readOnly ?? false;
  }

  private refuseIfReadOnly(what: string): void {
    if (this.readOnly) throw new PodscopeError('FailedPrecondition', `a read-only engine does not ${what}`);
  }

  newPath(): string {
    return join(this.dir, newNetnsName());
  }

  async create(signal?: AbortSignal, path = this.newPath()): Promise<string> {
    this.refuseIfReadOnly(`create the network namespace ${path}`);
    await this.prepareDir();
    try {
      const file = await open(path, constants.O_RDONLY | constants.O_CREAT | constants.O_EXCL, 0o444);
      await file.close();
    } catch (e) {
      throw new PodscopeError('RuntimeError', `cannot create network namespace file ${path}: ${(e as Error).message}`, { cause: e });
    }
    try {
      await runChecked(this.runner, { file: 'unshare', args: [`--net=${path}`, 'true'], timeoutMs: this.timeoutMs, signal });
    } catch (e) {
      await this.remove(path).catch(() => undefined);
      throw e;
    }
    return path;
  }

  async remove(path: string): Promise<void> {
    this.refuseIfReadOnly(`remove the network namespace ${path}`);
    const real = await realpathOrUndefined(path);
    if (real === undefined) return;
    if (isNamespaceMount(await readMountAt(real))) {
      // Lazy: a process that still has the file open (e.g. a CNI plugin being cancelled) must not make removal fail.
      const r = await this.runner.run({ file: 'umount', args: ['-l', path], timeoutMs: this.timeoutMs });
      // A concurrent remove may have unmounted it first; only a mount that is still there is a failure.
      if (r.exitCode !== 0 && isNamespaceMount(await readMountAt(real))) {
        throw new PodscopeError('RuntimeError', `cannot unmount network namespace ${path}: ${r.stderr.trim() || `exit ${r.exitCode}`}`, {
          details: { command: r.command, stderr: r.stderr },
        });
      }
    }
    await unlinkIfPresent(path);
  }

  /** Do not call it on a path whose create() is still running: between the file and the mount it looks stale. */
  async isClosed(path: string): Promise<boolean> {
    const real = await realpathOrUndefined(path);
    if (real === undefined) return true;
    if (isNamespaceMount(await readMountAt(real))) return false;
    if (!this.readOnly) await unlinkIfPresent(path);
    return true;
  }

  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return [];
      throw e;
    }
    const realDir = await realpath(this.dir);
    const mounts = await readMountInfo();
    return names
      .filter((n) => n.startsWith(NETNS_PREFIX) && isNamespaceMount(mountAt(mounts, join(realDir, n))))
      .map((n) => join(this.dir, n));
  }

  /**
   * Makes dir a mount point with shared propagation, as iproute2 does for /var/run/netns. Mount namespaces copied
   * from ours later (runc containers, `unshare -m` tools, services with private /tmp) get copies of every nsfs
   * mount below dir; with a shared (peer/slave) dir our lazy unmount propagates into those copies, so the namespace
   * is really freed instead of being kept alive by a mount nobody can see from here. The bind is recursive so that
   * namespaces pinned by a previous engine stay visible through the new mount point.
   */
  // No caller's AbortSignal here: the promise is shared, and one run being cancelled must not fail another's create.
  private prepareDir(): Promise<void> {
    this.dirReady ??= this.makeSharedMountPoint().catch((e: unknown) => {
      this.dirReady = undefined;
      throw e;
    });
    return this.dirReady;
  }

  private async makeSharedMountPoint(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o755 });
    const real = await realpath(this.dir);
    const mount = await readMountAt(real);
    if (mount?.optionalFields.some((f) => f.startsWith('shared:'))) return;
    const run = (args: string[]) => runChecked(this.runner, { file: 'mount', args, timeoutMs: this.timeoutMs });
    if (!mount) {
      await run(['--rbind', this.dir, this.dir]);
      // Two engines preparing the same fresh dir at once both bind it; a second, stacked bind would hide
      // namespaces pinned on the first from our unmounts. Keep one.
      for (let i = 0; i < 4 && (await readMountInfo()).filter((m) => m.mountPoint === real).length > 1; i++) {
        await runChecked(this.runner, { file: 'umount', args: [this.dir], timeoutMs: this.timeoutMs }).catch(() => undefined);
      }
    }
    await run(['--make-shared', this.dir]);
  }
}
