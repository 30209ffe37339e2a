/** What the engine persists for each container. Every view is derived from this. */
import type { ContainerConfig } from '../../../shared/domain/container';
import type { SerializedError } from '../../../shared/domain/errors';
import type { TraceEntry } from '../../../shared/domain/trace';
import type { ResolvedUser } from '../runtime/container-spec';

export const CONTAINER_RECORD_VERSION = 1;

/** containerd's internal states; CRI shows Created/Running/Exited/Unknown. */
export type ContainerInternalState = 'Created' | 'Running' | 'Exited' | 'Unknown';

export interface ContainerRecord {
  version: typeof CONTAINER_RECORD_VERSION;
  id: string;
  name: string;
  sandboxId: string;
  /** the pod's CRI runtime_handler at create time ("" or absent: the default, runc) */
  runtimeHandler?: string;
  config: ContainerConfig;
  /** the image as the config named it, and what it resolved to */
  imageName: string;
  imageId: string;
  createdAtNs: string;
  createdAt: string;
  startedAtNs?: string;
  finishedAtNs?: string;
  state: ContainerInternalState;
  pid?: number;
  startTicks?: number;
  /** conmon's pid (records written before the rename call it shimPid: upgradeContainerRecord) */
  monitorPid?: number;
  exitCode?: number;
  reason?: string;
  message?: string;
  /** `<stateDir>/containers/<id>`: the rootfs the image store prepared lives below it */
  rootDir: string;
  rootfsPath: string;
  /** `<runDir>/containers/<id>/bundle`: config.json, runc.log, exit.json, container.pid */
  bundleDir: string;
  /** absolute; "" when the pod has no log_directory or the config no log_path */
  logPath: string;
  /** the log file did not exist before this container created it (so a failed create deletes it) */
  logCreated?: boolean;
  user: ResolvedUser;
  seccomp: string;
  apparmor: string;
  stopSignal: string;
  /** the cgroup runc put it in (OCI cgroupsPath) */
  cgroupsPath: string;
  ociSpec: unknown;
  /** set once a stop was asked for, so the exit is not reported as a crash */
  stopRequested?: boolean;
  lastError?: SerializedError;
  /** CreateContainer's and StartContainer's steps (absent in a record of an older engine) */
  trace?: TraceEntry[];
}

/**
 * A record as read from disk, brought to today's shape. Version 1 records written before conmon's pid was named
 * monitorPid carry it as `shimPid`; the field is renamed in place (the rest of the shape is unchanged, so the version
 * stays 1 and an older engine still reads what a newer one wrote, only without that pid).
 */
export function upgradeContainerRecord(raw: unknown): ContainerRecord {
  const rec = raw as ContainerRecord & { shimPid?: number };
  if (rec.version !== CONTAINER_RECORD_VERSION) throw new Error(`unsupported record version ${String(rec.version)}`);
  if (rec.shimPid !== undefined) {
    rec.monitorPid ??= rec.shimPid;
    delete rec.shimPid;
  }
  return rec;
}
