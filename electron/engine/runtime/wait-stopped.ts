/**
 * The wait after a container's SIGKILL, for a pause and an app container alike: until its init is gone and its conmon
 * with it (conmon writes the exit file, then exits), read from /proc because the engine is no subreaper.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PodscopeError } from '../../../shared/domain/errors';
import type { RuntimeState, RuntimeStepReporter } from './types';

/**
 * Waits until the container's init is gone. The engine is no subreaper, so there is no exit status to wait on: one
 * `state` names the init's pid, then /proc/<pid>/stat is polled (a read of memory, where each `state` is a
 * process: tearing down many pods spent more time spawning those polls than stopping). Gone means what runc itself
 * checks: no such pid, a different start time (the pid was reused), or a zombie.
 */
export async function waitStopped(
  id: string,
  handler: string,
  state: (signal?: AbortSignal) => Promise<RuntimeState | undefined>,
  opts: { signal?: AbortSignal; report?: RuntimeStepReporter },
  timeoutMs: number,
): Promise<void> {
  const startedAt = new Date();
  const t0 = performance.now();
  let polls = 0;
  let delayMs = 2;
  let error: PodscopeError | undefined;
  let status: string | undefined;
  let monitor: { pid: number; startTime: string } | undefined;
  try {
    const first = await state(opts.signal);
    status = first?.status;
    const init = first && status !== 'stopped' ? procStatus(first.pid) : undefined;
    // conmon, the init's parent, writes the exit file once it has reaped it, then exits: stop waits for that too,
    // so a stopped container has its exit recorded and no process of it is left (a pause started by an older
    // engine has no conmon, and its parent is no business of stop's). When the init is already gone at the first
    // look (a loaded CI run: runc said stopped, and stop returned while conmon still ran), conmon is found by the
    // pid file in the bundle, if that pid is still a conmon of this container
    monitor = init ? conmonParentOf(init) : first ? conmonOfBundle(first.bundle, id) : undefined;
    let initGone = !init;
    while (init || monitor) {
      polls++;
      if (!initGone && init) {
        const now = procStatus(init.pid);
        initGone = !now || now.startTime !== init.startTime || now.state === 'Z';
      }
      if (initGone) {
        status = 'stopped';
        const m = monitor && procStatus(monitor.pid);
        if (!monitor || !m || m.startTime !== monitor.startTime || m.state === 'Z') break;
      }
      if (performance.now() - t0 > timeoutMs) {
        throw new PodscopeError(
          'DeadlineExceeded',
          initGone
            ? `the conmon (pid ${monitor!.pid}) of container ${id} still runs ${timeoutMs} ms after its container exited`
            : `container ${id} (init pid ${init!.pid}) is still ${status} ${timeoutMs} ms after SIGKILL`,
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
      step: `${handler}.wait`,
      label: "wait until the container's init process (and its conmon) is gone",
      startedAt: startedAt.toISOString(),
      durationMs: performance.now() - t0,
      ok: !error,
      ...(error ? { error } : {}),
      detail: { polls, status: status ?? 'deleted', ...(monitor ? { conmonPid: monitor.pid } : {}) },
    });
  }
}

/** The state letter, parent and start time (clock ticks since boot) of a process, from /proc/<pid>/stat; undefined when gone. */
function procStatus(pid: number): { pid: number; ppid: number; state: string; startTime: string } | undefined {
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

/**
 * The conmon named by `<bundle>/conmon.pid` when that pid is still a conmon started for this container (`-c <id>`
 * on its command line: a pid file outlives its process, and the pid may be someone else's by now)
 */
function conmonOfBundle(bundle: string | undefined, id: string): { pid: number; startTime: string } | undefined {
  if (!bundle) return undefined;
  try {
    const pid = Number.parseInt(readFileSync(join(bundle, 'conmon.pid'), 'utf8').trim(), 10);
    if (!(pid > 1) || readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'conmon') return undefined;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!argv.some((a, i) => (a === '-c' || a === '--cid') && argv[i + 1] === id)) return undefined;
    const s = procStatus(pid);
    return s && s.state !== 'Z' ? { pid, startTime: s.startTime } : undefined;
  } catch {
    return undefined;
  }
}

/** The init's parent when it is conmon (the container's monitor); undefined for one started without it. */
function conmonParentOf(init: { ppid: number }): { pid: number; startTime: string } | undefined {
  const ppid = init.ppid;
  try {
    if (!(ppid > 1) || readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() !== 'conmon') return undefined;
    const parent = procStatus(ppid);
    return parent && { pid: ppid, startTime: parent.startTime };
  } catch {
    return undefined;
  }
}
