/**
 * Starting a container under conmon (docs/semantics.md#container-monitor), for the app containers and the pause
 * containers alike (runtime/conmon.ts).
 *
 * conmon (`--api-version 1`) daemonizes, runs `<runtime> create` with the container's stdio as its own pipes, and
 * says over its sync pipe (`_OCI_SYNCPIPE`, fd 3 here) the container's pid or why create failed. What comes after
 * (`<runtime> start`, reading conmon's pid file) is the caller's.
 */
import { constants, readFileSync } from 'node:fs';
import { access, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { launchWithSyncPipeInProcess, type SyncPipeOutcome, type SyncPipeRequest } from '../os/sync-pipe';
import { parseRuncLog, readLogFrom, runcErrors } from './runc-log';
import { sysctlWriteRefusal } from './sysctl-rules';

const resolvedExecutables = new Map<string, Promise<string>>();

/**
 * `name` as conmon wants it: an absolute path, looked up on PATH when it has no slash. Looked up once per process
 * (a look is an access() per PATH entry, each a trip to the thread pool, on every create).
 */
export function absoluteExecutable(name: string): Promise<string> {
  if (name.includes('/')) return Promise.resolve(name);
  let found = resolvedExecutables.get(name);
  if (!found) {
    found = lookUpOnPath(name);
    resolvedExecutables.set(name, found);
    // not there yet (installed later): look again next time
    void found.then((p) => p === name && resolvedExecutables.delete(name));
  }
  return found;
}

async function lookUpOnPath(name: string): Promise<string> {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(dir || '.', name);
    if (
      await access(p, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return p;
  }
  return name;
}

export interface ConmonCreate {
  /** the conmon binary (default conmon) */
  conmonPath?: string;
  id: string;
  /** holds config.json already; conmon's working directory, persist dir (its `oom` notice) and the runtime's log */
  bundleDir: string;
  /** the runtime (runc, crun) as the engine runs it, its handler name (in messages) and its `--root` */
  runtime: { path: string; handler: string; root: string; wrapper: string[] };
  /** the runtime's own `--log` (JSON): where a failed create says why */
  runtimeLog: string;
  /** where conmon writes the container's pid */
  pidFile: string;
  /** where conmon writes its own pid */
  conmonPidFile: string;
  /** conmon writes the exit code to `<exitDir>/<id>` */
  exitDir: string;
  /** the CRI-format log of the container's output (`-l k8s-file:`) */
  logPath: string;
  /** flags after the common ones (`-t`, `-i`, `--leave-stdin-open`) */
  extraArgs?: string[];
  /** the OCI spec, to explain a sysctl the kernel refused */
  spec: unknown;
  signal?: AbortSignal;
  /** how conmon is started (ProcessRunner.launchWithSyncPipe: from the spawn helper); default in-process */
  launch?: (req: SyncPipeRequest) => Promise<SyncPipeOutcome>;
}

/**
 * Runs conmon, which runs `<runtime> create`, and waits for its sync pipe. Resolves with the container's pid once it
 * is created (not started); a failed create is a RuntimeError with the runtime's own words.
 */
export async function createUnderConmon(o: ConmonCreate): Promise<{ pid: number }> {
  const { id, bundleDir, exitDir, pidFile, runtimeLog, signal } = o;
  // independent of each other, so side by side (each is a round trip through libuv's thread pool)
  await Promise.all([
    rm(exitDir, { recursive: true, force: true }).then(() => mkdir(exitDir, { recursive: true })),
    // conmon links <socket-dir>/<id> to the bundle there, and dies (logging only to syslog) when the dir is missing
    mkdir(join(bundleDir, 'sock'), { recursive: true }),
    rm(pidFile, { force: true }),
  ]);
  // conmon runs the runtime itself, by absolute path only, with the --runtime-arg words before `create`; a wrapper
  // (crun on a hybrid cgroup host, oci-runtime.ts) becomes the runtime path and its words come first
  const [runtimeBinary, wrapperPath] = await Promise.all([
    absoluteExecutable(o.runtime.path),
    o.runtime.wrapper.length > 0 ? absoluteExecutable(o.runtime.wrapper[0]!) : undefined,
  ]);
  const runtimePath = wrapperPath ?? runtimeBinary;
  const runtimeWords = wrapperPath ? [...o.runtime.wrapper.slice(1), runtimeBinary] : [];
  const args = [
    '--api-version',
    '1',
    '-c',
    id,
    '-u',
    id,
    '-n',
    id,
    '-r',
    runtimePath,
    '-b',
    bundleDir,
    '-p',
    pidFile,
    '-P',
    o.conmonPidFile,
    '-l',
    `k8s-file:${o.logPath}`,
    '--exit-dir',
    exitDir,
    '--persist-dir',
    bundleDir,
    '--socket-dir-path',
    join(bundleDir, 'sock'),
    // the joined form: glib's option parser would take a lone `--` for the end of conmon's own options
    ...runtimeWords.map((w) => `--runtime-arg=${w}`),
    '--runtime-arg',
    `--root=${o.runtime.root}`,
    '--runtime-arg',
    `--log=${runtimeLog}`,
    '--runtime-arg',
    '--log-format=json',
    ...(o.extraArgs ?? []),
  ];
  const outcome = await withDeadline(
    (o.launch ?? launchWithSyncPipeInProcess)({
      file: o.conmonPath ?? 'conmon',
      args,
      // conmon writes its `oom` notice into its working directory: the bundle, not wherever the engine runs
      cwd: bundleDir,
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', _OCI_SYNCPIPE: '3' },
    }),
    id,
    signal,
  );
  const reply = conmonReply(outcome);
  if (!(reply.data !== undefined && reply.data > 0)) {
    const messages = runcErrors(parseRuncLog(await readLogFrom(runtimeLog, 0)));
    throw (
      sysctlWriteRefusal(messages.length ? messages : [reply.message ?? ''], o.spec) ??
      new PodscopeError(
        'RuntimeError',
        `${o.runtime.handler} create failed: ${messages.length ? messages.join('; ') : (reply.message ?? 'unknown error')}`,
        {
          details: { runcErrors: messages },
        },
      )
    );
  }
  return { pid: reply.data };
}

/** conmon's word on the create: the pid (`data` > 0), or why not; a conmon that cannot start is FailedPrecondition */
function conmonReply(outcome: SyncPipeOutcome): { data?: number; message?: string } {
  if (outcome.kind === 'spawn-error')
    throw new PodscopeError(
      'FailedPrecondition',
      outcome.code === 'ENOENT' ? 'conmon not found: install conmon (Debian package conmon)' : `cannot start conmon: ${outcome.message}`,
    );
  if (outcome.kind === 'closed')
    return { data: -1, message: outcome.stderr.trim() || `conmon exited with code ${outcome.exitCode} before creating the container` };
  return JSON.parse(outcome.line) as { data?: number; message?: string };
}

/** conmon's answer within 30 s, unless the caller cancels first (conmon runs on: the failure path deletes it) */
function withDeadline<T>(answer: Promise<T>, id: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new PodscopeError('DeadlineExceeded', `conmon did not create container ${id} within 30000 ms`)),
      30_000,
    );
    const onAbort = () => reject(new PodscopeError('Canceled', `starting container ${id} was canceled`));
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    answer.then(
      (v) => {
        settle();
        resolve(v);
      },
      (e: unknown) => {
        settle();
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** conmon's pid from its pid file (`-P`); 0 when the file is missing or says nothing */
export async function readConmonPid(conmonPidFile: string): Promise<number> {
  const pid = Number.parseInt((await readFile(conmonPidFile, 'utf8').catch(() => '')).trim(), 10);
  return pid > 0 ? pid : 0;
}

/** What conmon wrote when the container exited: the code (128+N for signal N) and the file's mtime, the finish time. */
export async function readConmonExitFile(file: string): Promise<{ exitCode: number; finishedAtNs: string } | undefined> {
  try {
    const [text, s] = await Promise.all([readFile(file, 'utf8'), stat(file, { bigint: true })]);
    const exitCode = Number.parseInt(text.trim(), 10);
    if (!Number.isFinite(exitCode)) return undefined;
    return { exitCode, finishedAtNs: s.mtimeNs.toString() };
  } catch {
    return undefined;
  }
}

/** SIGKILL to the conmon of a failed start; a pid that is no conmon (gone, reused) is left alone. */
export function endConmon(pid: number): void {
  if (!(pid > 1)) return;
  try {
    if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'conmon') return;
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone just now
  }
}
