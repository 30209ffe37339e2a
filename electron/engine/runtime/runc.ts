/**
 * The pause container under runc, with the engine's own `--root` (cgroupfs driver: runc's default), watched by conmon
 * as every app container is (docs/semantics.md#container-monitor; CRI-O runs its infra container the same way).
 *
 * Start: conmon runs `runc create` (runtime/conmon-start.ts, shared with the app containers) and stays the pause's
 * parent; the engine then runs `runc start`. conmon writes the pause's exit code to `<bundle>/exits/<id>` (its mtime
 * is the finish time), which the engine cannot learn otherwise (it is no subreaper). The pause writes nothing, but
 * conmon needs a log: `<bundle>/pause.log`. runc's own errors go to `--log <bundle>/runc.log --log-format json`; the
 * other commands exit promptly and are read on stderr.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PodscopeError, type ErrorCode } from '../../../shared/domain/errors';
import { describeCommand, type ExecResult, type ProcessRunner } from '../os/exec';
import { ensurePauseRootfs } from './pause-rootfs';
import { createUnderConmon, readConmonExitFile, readConmonPid } from './conmon-start';
import { parseRuncLog, runcErrors } from './runc-log';
import type { PauseExitInfo, PauseRuntime, PauseState, RuntimeContainer, RuntimeStepReporter } from './types';

export interface RuncPauseRuntimeOptions {
  runcPath: string;
  /** the conmon binary that watches the pause (default conmon) */
  conmonPath?: string;
  /** runc `--root`, e.g. `<runDir>/runc` */
  root: string;
  runner: ProcessRunner;
  /** where ensureRootfs() builds the pause tree, e.g. `<stateDir>/pause/rootfs` */
  rootfsDir: string;
  busyboxPath?: string;
  /** per runc command (default 30 s) */
  commandTimeoutMs?: number;
  /** how long stop() waits for the container's init (and its conmon) to be gone after SIGKILL (default 10 s) */
  stopTimeoutMs?: number;
}

interface StepOptions {
  signal?: AbortSignal;
  report?: RuntimeStepReporter;
}

const DOES_NOT_EXIST = /container does not exist/;
const NOT_RUNNING = /container not running/;

function errorCode(r: ExecResult): ErrorCode {
  return r.timedOut ? 'DeadlineExceeded' : r.canceled ? 'Canceled' : 'RuntimeError';
}

function runcFailure(subcommand: string, r: ExecResult, messages: string[]): PodscopeError {
  const why =
    messages.length > 0
      ? messages.join('; ')
      : r.timedOut
        ? 'timed out'
        : r.canceled
          ? 'was canceled'
          : r.signal
            ? `killed by ${r.signal}`
            : `exit code ${r.exitCode}`;
  return new PodscopeError(errorCode(r), `runc ${subcommand} failed: ${why}`, {
    details: {
      command: r.command,
      exitCode: r.exitCode,
      signal: r.signal,
      runcErrors: messages,
      stderr: r.stderr.slice(-4000),
      timedOut: r.timedOut,
      canceled: r.canceled,
    },
  });
}

function stderrErrors(r: ExecResult): string[] {
  return runcErrors(parseRuncLog(r.stderr));
}

export class RuncPauseRuntime implements PauseRuntime {
  private readonly commandTimeoutMs: number;
  private readonly stopTimeoutMs: number;
  private rootfs: Promise<string> | undefined;

  constructor(private readonly options: RuncPauseRuntimeOptions) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? 30_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  }

  ensureRootfs(): Promise<string> {
    this.rootfs ??= ensurePauseRootfs({ rootfsDir: this.options.rootfsDir, busyboxPath: this.options.busyboxPath }).catch((e: unknown) => {
      this.rootfs = undefined;
      throw e;
    });
    return this.rootfs;
  }

  async start(id: string, bundleDir: string, spec: unknown, opts: StepOptions): Promise<{ pid: number; monitorPid: number }> {
    await mkdir(bundleDir, { recursive: true, mode: 0o755 });
    await writeFile(join(bundleDir, 'config.json'), JSON.stringify(spec, null, 2), { mode: 0o644 });
    const conmonPidFile = join(bundleDir, 'conmon.pid');
    try {
      const { pid } = await this.reported(
        'conmon.create',
        'conmon: runc create',
        opts,
        () => ({ bundle: bundleDir }),
        () =>
          createUnderConmon({
            conmonPath: this.options.conmonPath,
            id,
            bundleDir,
            runtime: { path: this.options.runcPath, handler: 'runc', root: this.options.root, wrapper: [] },
            runtimeLog: join(bundleDir, 'runc.log'),
            pidFile: join(bundleDir, 'pause.pid'),
            conmonPidFile,
            exitDir: join(bundleDir, 'exits'),
            logPath: join(bundleDir, 'pause.log'),
            spec,
            launch: this.options.runner.launchWithSyncPipe?.bind(this.options.runner),
            // not canceled half-way: a `runc create` left running by an abort would create the container after the
            // undo's delete. It takes tens of milliseconds; the cancel is honoured once it answered.
          }),
      );
      if (opts.signal?.aborted) throw new PodscopeError('Canceled', `starting the pause container ${id} was canceled`);
      await this.step('runc.start', ['start', id], opts, (r) => (r.exitCode === 0 ? undefined : runcFailure('start', r, stderrErrors(r))));
      return { pid, monitorPid: await readConmonPid(conmonPidFile) };
    } catch (e) {
      // The caller never learned it existed: no conmon and no runtime container may outlive a failed start. conmon
      // goes first (it would otherwise wait on a created container), then the container, which a failed create or
      // start can leave behind in "created" or "stopped".
      endConmon(await readConmonPid(conmonPidFile));
      await this.delete(id, { report: opts.report }).catch(() => undefined);
      throw e;
    }
  }

  async exitInfo(id: string, bundleDir: string): Promise<PauseExitInfo | undefined> {
    return readConmonExitFile(join(bundleDir, 'exits', id));
  }

  async stop(id: string, opts: StepOptions = {}): Promise<void> {
    let gone = false;
    await this.step('runc.kill', ['kill', '--all', id, 'KILL'], opts, (r) => {
      gone = DOES_NOT_EXIST.test(r.stderr);
      return r.exitCode === 0 || gone || NOT_RUNNING.test(r.stderr) ? undefined : runcFailure('kill', r, stderrErrors(r));
    });
    if (!gone) await this.waitStopped(id, opts);
  }

  async delete(id: string, opts: StepOptions = {}): Promise<void> {
    await this.step('runc.delete', ['delete', '--force', id], opts, (r) =>
      r.exitCode === 0 || DOES_NOT_EXIST.test(r.stderr) ? undefined : runcFailure('delete', r, stderrErrors(r)),
    );
  }

  async state(id: string, signal?: AbortSignal): Promise<PauseState | undefined> {
    if (!this.rootExists()) return undefined;
    const r = await this.runc(['state', id], signal);
    if (r.exitCode !== 0) {
      if (DOES_NOT_EXIST.test(r.stderr)) return undefined;
      throw runcFailure('state', r, stderrErrors(r));
    }
    const s = JSON.parse(r.stdout) as PauseState;
    return { id: s.id, pid: s.pid, status: s.status, bundle: s.bundle };
  }

  async list(): Promise<string[]> {
    return (await this.listContainers()).map((c) => c.id);
  }

  async listContainers(): Promise<RuntimeContainer[]> {
    if (!this.rootExists()) return [];
    const r = await this.runc(['list', '--format', 'json']);
    if (r.exitCode !== 0) throw runcFailure('list', r, stderrErrors(r));
    // runc prints `null` when its root holds no container
    const items = JSON.parse(r.stdout) as { id: string; status?: string; annotations?: Record<string, string> }[] | null;
    return (items ?? []).map((c) => ({ id: c.id, status: c.status ?? '', annotations: c.annotations ?? {} }));
  }

  /**
   * runc creates its --root on any command, even `list` and `state`: with no root there is no container, and a
   * look (a read-only `podscope pods` on a fresh run dir) must not create one.
   */
  private rootExists(): boolean {
    return existsSync(this.options.root);
  }

  /**
   * Waits until the container's init is gone. The engine is no subreaper, so there is no exit status to wait on: one
   * `runc state` names the init's pid, then /proc/<pid>/stat is polled (a read of memory, where each `runc state` is a
   * process: tearing down many pods spent more time spawning those polls than stopping). Gone means what runc itself
   * checks: no such pid, a different start time (the pid was reused), or a zombie.
   */
  private async waitStopped(id: string, opts: StepOptions): Promise<void> {
    const startedAt = new Date();
    const t0 = performance.now();
    let polls = 0;
    let delayMs = 2;
    let error: PodscopeError | undefined;
    let status: string | undefined;
    let monitor: { pid: number; startTime: string } | undefined;
    try {
      const first = await this.state(id, opts.signal);
      status = first?.status;
      const init = first && status !== 'stopped' ? initProcess(first.pid) : undefined;
      // conmon, the init's parent, writes the exit file once it has reaped it, then exits: stop waits for that too,
      // so a stopped pause has its exit recorded and no process of it is left (a pause started by an older engine
      // has no conmon, and its parent is no business of stop's)
      monitor = init ? conmonParentOf(init) : undefined;
      let initGone = false;
      while (init) {
        polls++;
        if (!initGone) {
          const now = initProcess(init.pid);
          initGone = !now || now.startTime !== init.startTime || now.state === 'Z';
        }
        if (initGone) {
          status = 'stopped';
          const m = monitor && initProcess(monitor.pid);
          if (!monitor || !m || m.startTime !== monitor.startTime || m.state === 'Z') break;
        }
        if (performance.now() - t0 > this.stopTimeoutMs) {
          throw new PodscopeError(
            'DeadlineExceeded',
            initGone
              ? `the conmon (pid ${monitor!.pid}) of container ${id} still runs ${this.stopTimeoutMs} ms after its container exited`
              : `container ${id} (init pid ${init.pid}) is still ${status} ${this.stopTimeoutMs} ms after SIGKILL`,
          );
        }
        await sleep(delayMs, undefined, { signal: opts.signal });
        delayMs = Math.min(delayMs * 2, 100);
      }
      if (first && !init) status = 'stopped';
    } catch (e) {
      error =
        e instanceof PodscopeError
          ? e
          : opts.signal?.aborted
            ? new PodscopeError('Canceled', `waiting for container ${id} to stop was canceled`, { cause: e })
            : new PodscopeError('RuntimeError', `cannot read the state of container ${id}: ${(e as Error).message}`, { cause: e });
      throw error;
    } finally {
      opts.report?.({
        step: 'runc.wait',
        label: "wait until the container's init process (and its conmon) is gone",
        startedAt: startedAt.toISOString(),
        durationMs: performance.now() - t0,
        ok: !error,
        ...(error ? { error } : {}),
        detail: { polls, status: status ?? 'deleted', ...(monitor ? { conmonPid: monitor.pid } : {}) },
      });
    }
  }

  /** Runs one step and reports it, failed or not (a runc command, conmon's create); detail is read once it ended. */
  private async reported<T>(
    step: string,
    label: string,
    opts: StepOptions,
    detail: () => Record<string, unknown>,
    run: () => Promise<T>,
  ): Promise<T> {
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    let error: unknown;
    try {
      return await run();
    } catch (e) {
      error = e;
      throw e;
    } finally {
      opts.report?.({
        step,
        label,
        startedAt,
        durationMs: performance.now() - t0,
        ok: error === undefined,
        ...(error !== undefined ? { error } : {}),
        detail: detail(),
      });
    }
  }

  /** One reported runc command (label: `runc.kill` ⇒ `runc kill`); `judge` turns the result into the error to throw, if any. */
  private async step(
    step: string,
    args: string[],
    opts: StepOptions,
    judge: (r: ExecResult) => PodscopeError | undefined | Promise<PodscopeError | undefined>,
  ): Promise<void> {
    let r: ExecResult | undefined;
    const detail = () => ({
      command: r?.command ?? describeCommand(this.options.runcPath, ['--root', this.options.root, ...args]),
      exitCode: r?.exitCode,
    });
    await this.reported(step, step.replace('.', ' '), opts, detail, async () => {
      r = await this.runc(args, opts.signal);
      const error = await judge(r);
      if (error) throw error;
    });
  }

  private runc(args: string[], signal?: AbortSignal): Promise<ExecResult> {
    return this.options.runner.run({
      file: this.options.runcPath,
      args: ['--root', this.options.root, ...args],
      timeoutMs: this.commandTimeoutMs,
      signal,
    });
  }
}

/** The state letter, parent and start time (clock ticks since boot) of a process, from /proc/<pid>/stat; undefined when gone. */
function initProcess(pid: number): { pid: number; ppid: number; state: string; startTime: string } | undefined {
  if (!(pid > 0)) return undefined;
  try {
    // synchronous: procfs is generated in memory, and the wait polls it every few milliseconds
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(fields[1]), state: fields[0] ?? '', startTime: fields[19] ?? '' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The init's parent when it is conmon (the pause's monitor); undefined for a pause started without one. */
function conmonParentOf(init: { ppid: number }): { pid: number; startTime: string } | undefined {
  const ppid = init.ppid;
  try {
    if (!(ppid > 1) || readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() !== 'conmon') return undefined;
    const parent = initProcess(ppid);
    return parent && { pid: ppid, startTime: parent.startTime };
  } catch {
    return undefined;
  }
}

/** SIGKILL to the conmon of a failed start; a pid that is no conmon (gone, reused) is left alone. */
function endConmon(pid: number): void {
  if (!(pid > 1)) return;
  try {
    if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'conmon') return;
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone just now
  }
}
