/**
 * The OCI runtime binaries a pod can run on, and the one place that knows how each differs (docs/semantics.md#runtime-handlers).
 *
 * CRI's `runtime_handler` (crictl `runp --runtime <name>`) names one: `runc` (also the empty name, the default) or
 * `crun`. Both take the same command lines for what the engine and conmon use (`--root`, `--log … --log-format json`,
 * `create`/`start`, `exec --process --pid-file`, `kill [--all]`, `delete --force`, `list --format json`); where they
 * differ is listed here: how "no such container" and "not running" read, how `update` takes the resources document,
 * and what `create` needs around it on a hybrid cgroup host. A terminal exec runs under conmon with the pty handed
 * over its console socket, so neither runtime copies a terminal's output itself (crun 1.8.1 sometimes put that output
 * in its --log file when it did, in the foreground).
 * Each handler keeps its own `--root` (the two state formats are not interchangeable).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import type { RuntimeHandlerInfo } from '../../../shared/domain/sandbox';
import { findBusybox } from '../os/busybox';
import type { ProcessRunner } from '../os/exec';

export const RUNTIME_HANDLERS = ['runc', 'crun'] as const;
export type RuntimeHandlerName = (typeof RUNTIME_HANDLERS)[number];
export const DEFAULT_RUNTIME_HANDLER: RuntimeHandlerName = 'runc';

export interface OciRuntimeBinary {
  handler: RuntimeHandlerName;
  /** the executable (a name on PATH or an absolute path) */
  path: string;
  /** the Debian package that installs it */
  debianPackage: string;
  /** `update` reads the OCI LinuxResources document from stdin (`--resources -`); else from a file */
  updateFromStdin: boolean;
  /** the runtime's words for an id it does not know (kill, state, exec) */
  doesNotExist: RegExp;
  /** the runtime's words for a kill of a container whose process is gone */
  notRunning: RegExp;
  /**
   * argv put before the binary for `run` (where it enters the cgroups); empty for a plain run. Resolved once per
   * host: see crunCgroupWrapper.
   */
  runWrapper(): Promise<string[]>;
}

/** which executable each handler runs; from EngineOptions (runcPath, crunPath) */
export interface RuntimeBinaryPaths {
  runcPath: string;
  crunPath?: string;
}

export function isRuntimeHandler(name: string): name is RuntimeHandlerName {
  return (RUNTIME_HANDLERS as readonly string[]).includes(name);
}

/**
 * CRI's runtime_handler as a handler name: "" is the default (runc); anything else unknown is InvalidArgument that
 * names the field and the handlers there are.
 */
export function resolveRuntimeHandler(name: string | undefined): RuntimeHandlerName {
  const n = name ?? '';
  if (n === '') return DEFAULT_RUNTIME_HANDLER;
  if (isRuntimeHandler(n)) return n;
  // containerd's words, then the field and what it may be
  throw new PodscopeError(
    'InvalidArgument',
    `no runtime for ${JSON.stringify(n)} is configured (runtime_handler: known handlers are ${RUNTIME_HANDLERS.join(', ')}; empty means ${DEFAULT_RUNTIME_HANDLER})`,
    { details: { field: 'runtime_handler', known: [...RUNTIME_HANDLERS] } },
  );
}

export function ociRuntimeBinary(handler: RuntimeHandlerName, paths: RuntimeBinaryPaths): OciRuntimeBinary {
  if (handler === 'crun')
    return {
      handler,
      path: paths.crunPath || 'crun',
      debianPackage: 'crun',
      // crun's -r takes a file name only (and Node's stdin pipe is a socket, which /dev/stdin cannot open)
      updateFromStdin: false,
      // crun reads <root>/<id>/status first: `error opening file `<root>/<id>/status`: No such file or directory`
      doesNotExist: /container does not exist|error opening file `[^`]*\/status`: No such file or directory/,
      notRunning: /No such process|container not running|process already finished/,
      runWrapper: crunCgroupWrapper,
    };
  return {
    handler,
    path: paths.runcPath || 'runc',
    debianPackage: 'runc',
    updateFromStdin: true,
    doesNotExist: /container does not exist/,
    notRunning: /container not running|process already finished/,
    runWrapper: async () => [],
  };
}

const UNIFIED = '/sys/fs/cgroup/unified';

/**
 * crun refuses to put a container in cgroups on a hybrid host (v1 controllers under /sys/fs/cgroup, a cgroup2 at
 * /sys/fs/cgroup/unified) when that cgroup2 has any controller ("cgroups in hybrid mode not supported, drop all
 * controllers from cgroupv2"); runc simply uses v1 there. Such a host (this project's machines: hugetlb is left to v2)
 * runs crun's `run` in a mount namespace of its own where a tmpfs hides the cgroup2, so crun takes the host for a
 * v1 one, which is what runc does too. The namespace keeps the host's propagation (a Bidirectional volume's mounts
 * must still reach the host, as under runc); only the cgroup2 mount is made private in it before the tmpfs goes over
 * it (when it is a shared one), so the tmpfs never reaches the host. It lasts as long as that crun process: a namespace
 * kept for many creates would not see the mounts made after it on a host whose mounts are private (this one's),
 * such as a container's rootfs and its pod's shm. Only run/create enter the cgroups:
 * exec, kill, update, delete run crun directly. (docs/semantics.md#runtime-handlers)
 */
export async function hybridCgroupNeedsHiding(readText: (path: string) => Promise<string> = (p) => readFile(p, 'utf8')): Promise<boolean> {
  const mounts = await readText('/proc/self/mounts').catch(() => '');
  const lines = mounts.split('\n').map((l) => l.split(' '));
  const tmpfsRoot = lines.some((f) => f[1] === '/sys/fs/cgroup' && f[2] === 'tmpfs');
  const unified = lines.some((f) => f[1] === UNIFIED && f[2] === 'cgroup2');
  if (!tmpfsRoot || !unified) return false;
  return (await readText(`${UNIFIED}/cgroup.controllers`).catch(() => '')).trim() !== '';
}

/**
 * Whether a mount propagates to peers (`shared:N` among the optional fields of /proc/self/mountinfo). Only a shared
 * cgroup2 mount needs making private in the namespace before the tmpfs goes over it: a private or slave one passes
 * nothing to the host (this host's are private), and each `mount` run costs a process in every crun create.
 */
export async function mountIsShared(
  mountPoint: string,
  readText: (path: string) => Promise<string> = (p) => readFile(p, 'utf8'),
): Promise<boolean> {
  const info = await readText('/proc/self/mountinfo').catch(() => '');
  for (const line of info.split('\n')) {
    const f = line.split(' ');
    // 0 id, 1 parent, 2 dev, 3 root, 4 mount point, 5 options, then optional fields up to "-"
    if (f[4] !== mountPoint) continue;
    const end = f.indexOf('-');
    return f.slice(6, end < 0 ? undefined : end).some((o) => o.startsWith('shared:'));
  }
  return true;
}

let crunWrapper: Promise<string[]> | undefined;

/**
 * The shell that hides the cgroup2 before crun runs. util-linux `sh` then `mount` are two dynamically linked execs
 * (measured 6.4 ms for the whole wrapper around `true`); busybox's shell is static and its `mount` applet runs in
 * the shell's own process (3.5–4.0 ms): about 2.5 ms off every crun create on such a host. Same script either way.
 */
export async function hidingShell(isExecutable?: (path: string) => Promise<boolean>): Promise<string[]> {
  const busybox = await findBusybox(isExecutable);
  return busybox ? [busybox, 'sh'] : ['sh'];
}

/** argv that runs the program after it in a mount namespace of its own where a tmpfs covers the host's cgroup2 */
export function cgroup2HidingWrapper(shell: string[], cgroup2IsShared: boolean): string[] {
  const hide = `mount -t tmpfs -o size=4k,mode=0555 podscope-hides-cgroup2 ${UNIFIED}`;
  const script = cgroup2IsShared ? `mount --make-private ${UNIFIED} && ${hide}` : hide;
  return ['unshare', '--mount', '--propagation', 'unchanged', '--', ...shell, '-c', `${script} && exec "$@"`, 'sh'];
}

/** argv before crun (conmon's runtime path is its first word): see hybridCgroupNeedsHiding */
function crunCgroupWrapper(): Promise<string[]> {
  crunWrapper ??= (async () => {
    if (!(await hybridCgroupNeedsHiding())) return [];
    return cgroup2HidingWrapper(await hidingShell(), await mountIsShared(UNIFIED));
  })();
  return crunWrapper;
}

/** the app containers' `--root` of a handler: `<runDir>/containers/<handler>` (runc's is where it always was) */
export function containerRuntimeRoot(runDir: string, handler: RuntimeHandlerName): string {
  return join(runDir, 'containers', handler);
}

/**
 * the pause containers' `--root` of a handler: `<runDir>/<handler>`. runc's (`<runDir>/runc`) is where every pause
 * was before a pod's pause ran on its own handler, so records from then name the same root. Apart from the app
 * containers' roots, so neither start-up sweep lists the other's containers.
 */
export function pauseRuntimeRoot(runDir: string, handler: RuntimeHandlerName): string {
  return join(runDir, handler);
}

export function missingBinaryMessage(b: OciRuntimeBinary): string {
  return `${b.path} not found or not working: install ${b.handler} (Debian package ${b.debianPackage})`;
}

/** `<binary> --version` of every handler, at once */
export async function probeRuntimeHandlers(paths: RuntimeBinaryPaths, runner: ProcessRunner): Promise<RuntimeHandlerInfo[]> {
  return Promise.all(
    RUNTIME_HANDLERS.map(async (name) => {
      const b = ociRuntimeBinary(name, paths);
      const r = await runner.run({ file: b.path, args: ['--version'], timeoutMs: 5000 }).catch(() => undefined);
      const present = !!r && r.exitCode === 0;
      const version = present ? r.stdout.split('\n')[0]?.trim() : undefined;
      return {
        name,
        path: b.path,
        present,
        ...(version ? { version } : {}),
        default: name === DEFAULT_RUNTIME_HANDLER,
        ...(present ? {} : { problem: missingBinaryMessage(b) }),
      };
    }),
  );
}
