/** What the engine persists for each sandbox. Everything the status view shows is derived from this. */
import type { IpPreference } from '../../../shared/domain/config';
import type { SerializedError } from '../../../shared/domain/errors';
import type { PauseExit, PauseView, PendingCleanup, TraceEntry } from '../../../shared/domain/sandbox';
import { dirname, join } from 'node:path';
import type { PodFacts } from '../common/pod-facts';
import type { PauseLocation } from '../runtime/types';

export const RECORD_VERSION = 1;

/** The engine's own pod: the facts every feature reads (common/pod-facts.ts) and what only the pod verbs need. */
export interface SandboxRecord extends PodFacts {
  version: typeof RECORD_VERSION;
  ipPreference: IpPreference;
  createdAt: string;
  pause: PauseView;
  /**
   * the runtime handler and root the pause runs under (its pod's handler). Records written before the pause ran on
   * its pod's handler have none: upgradeSandboxRecord fills in where that engine put every pause, runc's root.
   */
  pauseRuntime?: PauseLocation;
  ociSpec?: unknown;
  /** the pause container's seccomp: "unconfined", "runtime/default" or "localhost/<path>" */
  seccomp?: string;
  /** <stateDir>/sandboxes/<id> and <runDir>/sandboxes/<id> */
  rootDir: string;
  runDir: string;
  trace: TraceEntry[];
  lastError?: SerializedError;
  stoppedAt?: string;
  /** a stop ran to the end: pause killed, network torn down, netns removed */
  stopCompleted?: boolean;
  /**
   * Set when the run's CNI ADD did not complete: per `<network>/<ifName>`, the plugin indices it executed. Only those
   * are DELed (a plugin that never ran holds nothing); absent after a complete ADD, when every plugin ran.
   */
  cniExecutedOnAdd?: Record<string, number[]>;
  /** what an unwind, stop or remove could not release; stop/remove retry exactly this (absent when nothing is left) */
  cleanupPending?: PendingCleanup[];
  /** the pause process was seen dead without a stop */
  pauseExit?: PauseExit;
}

/**
 * A record as read from disk, brought to today's shape. Version 1 records written before the pause ran on its pod's
 * runtime handler name no pause location: that engine ran every pause on runc under `<runDir>/runc` (the record's
 * own run dir is `<runDir>/sandboxes/<id>`). The field is added in place (the rest of the shape is unchanged, so the
 * version stays 1, as for the containers' shimPid→monitorPid).
 */
export function upgradeSandboxRecord(raw: unknown): SandboxRecord {
  const rec = raw as SandboxRecord;
  if (rec.version !== RECORD_VERSION)
    throw new Error(`unsupported record version ${String(rec.version)} (this engine reads ${RECORD_VERSION})`);
  if (!rec.pauseRuntime && typeof rec.runDir === 'string') rec.pauseRuntime = pauseLocationOf(rec);
  return rec;
}

/** where the sandbox's pause lives: as recorded, else (a record from before) runc under `<runDir>/runc` */
export function pauseLocationOf(rec: Pick<SandboxRecord, 'pauseRuntime' | 'runDir'>): PauseLocation {
  return rec.pauseRuntime ?? { handler: 'runc', root: join(dirname(dirname(rec.runDir)), 'runc') };
}
