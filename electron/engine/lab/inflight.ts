/**
 * The lab's in-flight marker: which process runs a lab run, told apart from a later process that reuses the pid by
 * the start time the kernel records for it (/proc/<pid>/stat field 22, clock ticks since boot).
 */
import { readFile } from 'node:fs/promises';
import type { LabCapabilities } from '../../../shared/domain/lab';

export interface ProcessIdentity {
  pid: number;
  /** field 22 of /proc/<pid>/stat; undefined where /proc is not readable */
  startTicks?: string;
}

/** everything a later start-up needs to tear the run down: the conflist, the capability args, the names */
export interface InflightRecord {
  id: string;
  owner: ProcessIdentity;
  createdAt: string;
  text: string;
  capabilities: LabCapabilities;
  containerId: string;
  netns: string;
  ifName: string;
}

/** field 22 (start time) of a live process; undefined when there is none or it is a zombie (it runs nothing) */
async function startTicks(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return undefined;
    return rest[19];
  } catch {
    return undefined;
  }
}

export async function processIdentity(pid: number): Promise<ProcessIdentity> {
  const ticks = await startTicks(pid);
  // the marker is written by the running process itself, so its own entry is never a zombie
  return { pid, ...(ticks !== undefined ? { startTicks: ticks } : {}) };
}

/** true while the process that wrote the marker is still the one running under its pid */
export async function isInflightOwnerAlive(owner: ProcessIdentity): Promise<boolean> {
  const now = await startTicks(owner.pid);
  if (now === undefined) return false;
  return owner.startTicks === undefined || owner.startTicks === now;
}
