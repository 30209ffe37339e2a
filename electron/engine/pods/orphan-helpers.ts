/**
 * Helper processes a killed engine leaves running. The engine starts CNI plugins and runc in their own process
 * groups and nothing kills them when it dies (Node cannot ask for PR_SET_PDEATHSIG), so after a SIGKILL a plugin ADD
 * may still be allocating (an IP, a veth, DNAT rules) when the next engine starts. If that engine's stop/remove ran
 * its DEL first, the late ADD would leave its allocation behind with nothing recording it. So a start-up after an
 * unclean shutdown first waits for them to finish, and kills the ones that do not finish in time.
 *
 * Ours are recognised by what the dead engine gave them: CNI_CONTAINERID=<one of our sandbox ids> in a plugin's
 * environment (libcni's protocol), or `--root <one of our pause roots>` on a runc or crun command line. Both read
 * from /proc, which root can read for every process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface OrphanHelper {
  pid: number;
  what: string;
}

function readNulList(path: string): string[] | undefined {
  try {
    return readFileSync(path, 'latin1').split('\0');
  } catch {
    return undefined; // gone, or a kernel thread
  }
}

export function findOrphanHelpers(ids: ReadonlySet<string>, runtimeRoots: string | readonly string[]): OrphanHelper[] {
  const roots = new Set(typeof runtimeRoots === 'string' ? [runtimeRoots] : runtimeRoots);
  const found: OrphanHelper[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    const env = readNulList(`/proc/${p}/environ`);
    const containerId = env?.find((v) => v.startsWith('CNI_CONTAINERID='))?.slice('CNI_CONTAINERID='.length);
    const cmdline = readNulList(`/proc/${p}/cmdline`) ?? [];
    if (containerId && ids.has(containerId)) {
      const verb = env?.find((v) => v.startsWith('CNI_COMMAND='))?.slice('CNI_COMMAND='.length) ?? '?';
      found.push({ pid, what: `CNI plugin ${cmdline[0] ?? '?'} ${verb} for sandbox ${containerId}` });
      continue;
    }
    const root = cmdline.indexOf('--root');
    if (root >= 0 && roots.has(cmdline[root + 1] ?? '')) found.push({ pid, what: cmdline.filter(Boolean).join(' ') });
  }
  return found;
}

export interface OrphanWaitOutcome extends OrphanHelper {
  /** "exited" on its own within the wait, or "killed" after it */
  outcome: 'exited' | 'killed';
  waitedMs: number;
}

/** Waits up to timeoutMs for the helpers to exit on their own, then SIGKILLs the rest. */
export async function waitForOrphanHelpers(
  ids: ReadonlySet<string>,
  runtimeRoots: string | readonly string[],
  timeoutMs: number,
): Promise<OrphanWaitOutcome[]> {
  const first = findOrphanHelpers(ids, runtimeRoots);
  if (first.length === 0) return [];
  const t0 = performance.now();
  const pending = new Map(first.map((h) => [h.pid, h]));
  const outcomes: OrphanWaitOutcome[] = [];
  while (pending.size > 0 && performance.now() - t0 < timeoutMs) {
    await sleep(20);
    const still = new Set(findOrphanHelpers(ids, runtimeRoots).map((h) => h.pid));
    for (const [pid, h] of pending) {
      if (still.has(pid)) continue;
      pending.delete(pid);
      outcomes.push({ ...h, outcome: 'exited', waitedMs: Math.round(performance.now() - t0) });
    }
  }
  for (const h of pending.values()) {
    try {
      process.kill(h.pid, 'SIGKILL');
    } catch {
      // exited just now
    }
    outcomes.push({ ...h, outcome: 'killed', waitedMs: Math.round(performance.now() - t0) });
  }
  return outcomes;
}
