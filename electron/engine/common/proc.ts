/**
 * Liveness of host processes read from /proc and kill(pid, 0): the pause containers' (pods/status.ts) and the app
 * containers' (containers/exit.ts) ask the same questions, so the answers live here once.
 */
import { readFileSync } from 'node:fs';
import type { PauseExit } from '../../../shared/domain/sandbox';

/** Fields of /proc/<pid>/stat after the parenthesised command name (which may itself contain spaces). */
async function procStat(pid: number): Promise<string[] | undefined> {
  return readProcStat(pid);
}

function readProcStat(pid: number): string[] | undefined {
  try {
    // procfs is generated in memory: a synchronous read costs microseconds, where an async one is a thread-pool
    // round trip that status and list would pay for every sandbox
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
};

/**
 * The wait status of a zombie (stat field 52, exit_code, Linux >= 3.5). The engine is not the pause's parent and
 * has no subreaper, so once the parent reaps it the status is gone: then only the time of the observation is known.
 */
export function observeExit(pid: number, startTicks?: number): Omit<PauseExit, 'at'> {
  let f: string[] | undefined;
  try {
    f = readProcStat(pid);
  } catch {
    f = undefined;
  }
  if (f && f[0] === 'Z' && (startTicks === undefined || Number(f[19]) === startTicks) && f[49] !== undefined) {
    const status = Number(f[49]);
    const sig = status & 0x7f;
    return sig !== 0 ? { signal: SIGNALS[sig] ?? `signal ${sig}` } : { exitCode: (status >> 8) & 0xff };
  }
  return { note: 'exit status not observable: the process was already reaped by its parent' };
}

/** The process start time in clock ticks (stat field 22): with the pid, it names one process across pid reuse. */
export async function processStartTicks(pid: number): Promise<number | undefined> {
  const f = await procStat(pid).catch(() => undefined);
  return f ? Number(f[19]) : undefined;
}

/**
 * Whether a process watched by conmon still runs, from two kill(pid, 0) (about 2 µs each, where a /proc/<pid>/stat
 * read costs about 28 µs: a list of 20 pods spent most of its server time there). conmon reaps its container the
 * moment it dies, writes the exit file and exits, so while conmon's pid exists the container's has not been reaped
 * and cannot have been reused; a zombie waiting those microseconds for conmon counts as running. False means "ask
 * the exact check" (start time, zombie state): either pid is gone, there is no conmon (a pause started by an older
 * engine), or no exists() was given. The background polls always ask the exact check, so a pid reused after both
 * were gone is caught within one poll.
 */
export function runsUnderLiveMonitor(exists: ((pid: number) => boolean) | undefined, pid: number, monitorPid: number | undefined): boolean {
  return exists !== undefined && monitorPid !== undefined && exists(monitorPid) && exists(pid);
}

/** kill(pid, 0): a process with this pid exists (a zombie too); EPERM still means it exists */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Dead when /proc has no such pid, shows a zombie (runc reports "stopped" while init has yet to reap it), or the
 * pid now belongs to a process started at another time. Any other read error says nothing, so it counts as alive.
 */
export async function isProcessAlive(pid: number, startTicks?: number): Promise<boolean> {
  let fields: string[] | undefined;
  try {
    fields = await procStat(pid);
  } catch {
    return true;
  }
  if (!fields || fields[0] === 'Z') return false;
  return startTicks === undefined || Number(fields[19]) === startTicks;
}
