/** Builds the list and status views from a record. */
import type { ContainerState, ContainerStatusView, ContainerSummary } from '../../../shared/domain/container';
import type { ContainerInternalState, ContainerRecord } from './record';

export function toCriContainerState(s: ContainerInternalState): ContainerState {
  return s === 'Created'
    ? 'CONTAINER_CREATED'
    : s === 'Running'
      ? 'CONTAINER_RUNNING'
      : s === 'Exited'
        ? 'CONTAINER_EXITED'
        : 'CONTAINER_UNKNOWN';
}

export function toContainerSummary(rec: ContainerRecord): ContainerSummary {
  return {
    id: rec.id,
    podSandboxId: rec.sandboxId,
    name: rec.name,
    metadata: rec.config.metadata,
    image: rec.imageName,
    imageRef: rec.imageId,
    state: toCriContainerState(rec.state),
    createdAt: rec.createdAt,
    createdAtNs: rec.createdAtNs,
    labels: rec.config.labels,
    annotations: rec.config.annotations,
    reason: rec.reason ?? '',
    exitCode: rec.exitCode ?? 0,
  };
}

export function toContainerStatus(rec: ContainerRecord): ContainerStatusView {
  return {
    ...toContainerSummary(rec),
    startedAtNs: rec.startedAtNs ?? '0',
    finishedAtNs: rec.finishedAtNs ?? '0',
    message: rec.message ?? '',
    mounts: rec.config.mounts,
    logPath: rec.logPath,
    ...(rec.pid !== undefined && { pid: rec.pid }),
    ...(rec.monitorPid !== undefined && { monitorPid: rec.monitorPid }),
    user: { uid: rec.user.uid, gid: rec.user.gid, supplementalGroups: rec.user.additionalGids },
    ...(rec.config.linux?.resources && { resources: rec.config.linux.resources }),
    seccomp: rec.seccomp,
    apparmor: rec.apparmor,
    stopSignal: rec.stopSignal,
    config: rec.config,
    ociSpec: rec.ociSpec,
    ...(rec.lastError && { lastError: rec.lastError }),
    trace: rec.trace ?? [],
  };
}
