/**
 * A runtime in its own pid namespace reports pids as it sees them (a kind node's containerd says its pause process is
 * pid 312). The host's pid of that process is the one whose NSpid (in /proc/<pid>/status, outermost first) holds the
 * reported number at the node's depth — and, since a sibling namespace at the same depth can hold the same number,
 * which is the node's or runs under one of the node's processes.
 */
import type { ProcSource } from './proc-source';

/** the NSpid values, outermost (the host's) first */
export function nsPidsOf(status: string | undefined): number[] {
  const m = /^NSpid:\s*(.+)$/m.exec(status ?? '');
  return m ? m[1]!.trim().split(/\s+/).map(Number) : [];
}

const ppidOf = (status: string | undefined) => Number(/^PPid:\s*(\d+)/m.exec(status ?? '')?.[1] ?? 0);

/** whether the process or one of its ancestors lives in the given pid namespace */
function underNamespace(proc: ProcSource, pid: number, pidNs: string): boolean {
  for (let p = pid, steps = 0; p > 1 && steps < 64; steps++) {
    if (proc.ns(p, 'pid') === pidNs) return true;
    p = ppidOf(proc.status(p));
  }
  return false;
}

/**
 * The host pid of the process that the runtime `runtimePid` (a host pid) reports as `reported`; the same number when
 * the runtime shares the host's pid namespace; undefined when no such process is seen.
 */
export function hostPidOf(proc: ProcSource, runtimePid: number, reported: number): number | undefined {
  const nodeNs = proc.ns(runtimePid, 'pid');
  if (!nodeNs) return undefined;
  if (nodeNs === proc.ns('self', 'pid')) return reported;
  const depth = nsPidsOf(proc.status(runtimePid)).length - 1;
  if (depth < 1) return undefined;
  for (const pid of proc.pids()) {
    const ids = nsPidsOf(proc.status(pid));
    if (ids[depth] === reported && underNamespace(proc, pid, nodeNs)) return pid;
  }
  return undefined;
}
