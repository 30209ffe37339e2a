/** Builds the list and status views from a record. */
import { analyzeBandwidth, type BandwidthAnalysis } from '../../../shared/domain/bandwidth';
import { isHostNetwork } from '../../../shared/domain/config';
import { selectForEveryPreference } from '../../../shared/domain/ip-selection';
import { analyzePortMappings, type PortMappingDecision } from '../../../shared/domain/portmap';
import { toCriState, type SandboxStatus, type SandboxSummary } from '../../../shared/domain/sandbox';
import type { SandboxRecord } from './record';
import { describePending } from './pending-cleanup';
import { describePauseExit } from '../../../shared/domain/sandbox-release';

export function toSummary(rec: SandboxRecord): SandboxSummary {
  return summarize(rec, analyzeBandwidth(rec.config.annotations), analyzePortMappings(rec.config.port_mappings));
}

function summarize(rec: SandboxRecord, bw: BandwidthAnalysis, ports: PortMappingDecision[]): SandboxSummary {
  const hostNetwork = isHostNetwork(rec.config);
  return {
    id: rec.id,
    name: rec.name,
    metadata: rec.config.metadata,
    state: toCriState(rec.state),
    internalState: rec.state,
    createdAt: rec.createdAt,
    createdAtNs: rec.createdAtNs,
    labels: rec.config.labels,
    annotations: rec.config.annotations,
    runtimeHandler: rec.runtimeHandler,
    hostNetwork,
    ip: rec.ip,
    additionalIps: rec.additionalIps,
    hostPorts: hostNetwork ? [] : ports.flatMap((d) => (d.cni ? [d.cni] : [])),
    bandwidth: hostNetwork ? {} : { ingress: bw.ingress?.human, egress: bw.egress?.human },
    ...(rec.cleanupPending?.length ? { cleanupPending: rec.cleanupPending } : {}),
    ...(rec.state !== 'Ready' ? { notReadyReason: notReadyReason(rec) } : {}),
  };
}

/** One line for "why is this pod NOTREADY", most pressing first. */
export function notReadyReason(rec: SandboxRecord): string {
  if (rec.cleanupPending?.length) return `cleanup pending: ${describePending(rec.cleanupPending)}`;
  if (rec.stopCompleted) return `stopped${rec.stoppedAt ? ` at ${rec.stoppedAt}` : ''}`;
  if (rec.pauseExit) return describePauseExit(rec.pauseExit);
  if (rec.lastError) return `${rec.state === 'Unknown' ? 'run failed' : 'last operation failed'}: ${rec.lastError.message}`;
  if (rec.state === 'Unknown') return 'being created';
  return `pause container ${rec.pause.status}`;
}

export function toStatus(rec: SandboxRecord, netnsClosed: boolean): SandboxStatus {
  const bandwidthAnalysis = analyzeBandwidth(rec.config.annotations);
  const portMappings = analyzePortMappings(rec.config.port_mappings);
  const status: SandboxStatus = {
    ...summarize(rec, bandwidthAnalysis, portMappings),
    config: rec.config,
    ipPreference: rec.ipPreference,
    netnsClosed,
    pause: rec.pause,
    portMappings,
    bandwidthAnalysis,
    networks: rec.network?.networks ?? [],
    interfaces: rec.network?.interfaces ?? {},
    routes: rec.network?.routes ?? [],
    dns: rec.network?.dns ?? [],
    trace: rec.trace,
    // the engine fills in clashes for a ready pod with host ports (service.ts); every other view has none
    hostPortConflicts: [],
  };
  if (rec.netnsPath) status.netnsPath = rec.netnsPath;
  if (rec.ipSelection) status.ipSelection = { ...rec.ipSelection, alternatives: selectForEveryPreference(rec.ipSelection.eth0Ips) };
  if (rec.ociSpec !== undefined) status.ociSpec = rec.ociSpec;
  if (rec.seccomp !== undefined) status.seccomp = rec.seccomp;
  if (rec.lastError) status.lastError = rec.lastError;
  if (rec.stoppedAt) status.stoppedAt = rec.stoppedAt;
  if (rec.pauseExit) status.pauseExit = rec.pauseExit;
  return status;
}
