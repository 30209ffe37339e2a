/** Engine view models ⇒ CRI wire messages (server side). */
import type { SandboxStatus, SandboxSummary, SandboxState } from '../../../shared/domain/sandbox';
import * as pb from '../generated/runtime_v1';
import { namespaceOptionToProto } from './config';
import { createdAtNs } from '../../../shared/domain/crictl-inspectp';

export function stateToProto(state: SandboxState): pb.PodSandboxState {
  return state === 'SANDBOX_READY' ? pb.PodSandboxState.SANDBOX_READY : pb.PodSandboxState.SANDBOX_NOTREADY;
}

export function stateFromProto(state: pb.PodSandboxState): SandboxState {
  return state === pb.PodSandboxState.SANDBOX_READY ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY';
}

export { createdAtNs } from '../../../shared/domain/crictl-inspectp';

export function summaryToPodSandbox(s: SandboxSummary): pb.PodSandbox {
  return {
    id: s.id,
    metadata: { ...s.metadata },
    state: stateToProto(s.state),
    createdAt: createdAtNs(s),
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtimeHandler,
  };
}

/**
 * network is always present; its ip is "" for host network and once the netns is closed (after Stop), as in
 * containerd, so a stopped pod does not advertise an address that may already be reused.
 */
export function statusToProto(s: SandboxStatus): pb.PodSandboxStatus {
  const showIps = !s.hostNetwork && !s.netnsClosed;
  const options = namespaceOptionToProto(s.config);
  return {
    id: s.id,
    metadata: { ...s.metadata },
    state: stateToProto(s.state),
    createdAt: createdAtNs(s),
    network: { ip: showIps ? s.ip : '', additionalIps: showIps ? s.additionalIps.map((ip) => ({ ip })) : [] },
    linux: { namespaces: { options } },
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtimeHandler,
  };
}
