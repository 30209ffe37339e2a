/**
 * Every react-query key the renderer uses, in one place. A key says what it caches and for which endpoint; the
 * nesting is what makes invalidation work: everything of an endpoint sits under `['ep', endpointId]` (an action on a
 * pod settles by invalidating that prefix), a container's status under the endpoint's containers list (a container
 * event refreshes both), an image's inspect under the image list. Features import their keys from here, so the
 * event handler that patches the cache and the screens that read it cannot disagree on a spelling.
 */
import type { IpPreference, PodSandboxConfigInput } from '../../../shared/domain/config';

const ep = (endpointId: string) => ['ep', endpointId] as const;

export const queryKeys = {
  /** the endpoints list (not per endpoint) */
  endpoints: ['endpoints'] as const,
  /** the nodes discovered on this machine (not per endpoint) */
  nodes: ['nodes'] as const,
  /** open port-forwards of this window, over every endpoint */
  portForwards: ['portForwards'] as const,
  /** everything cached for one endpoint */
  endpoint: ep,

  pods: (endpointId: string) => [...ep(endpointId), 'pods'] as const,
  pod: (endpointId: string, id: string) => [...ep(endpointId), 'pod', id] as const,
  /**
   * Deliberately not under `pod`: progress events invalidate the status many times during a run or stop, and each
   * live read runs ip/tc/iptables on the host.
   */
  podLive: (endpointId: string, id: string) => [...ep(endpointId), 'live', id] as const,
  podTopology: (endpointId: string, id: string) => [...ep(endpointId), 'topology', id] as const,
  podProbe: (endpointId: string, id: string) => [...ep(endpointId), 'probe', id] as const,
  /** the last throughput measurement and CNI CHECK of this window (the engine keeps neither): cache-only */
  podThroughput: (endpointId: string, id: string) => [...ep(endpointId), 'throughput', id] as const,
  podCheck: (endpointId: string, id: string) => [...ep(endpointId), 'check', id] as const,

  containers: (endpointId: string) => [...ep(endpointId), 'containers'] as const,
  containerStatus: (endpointId: string, id: string) => [...ep(endpointId), 'containers', 'status', id] as const,
  podContainers: (endpointId: string, podId: string) => [...ep(endpointId), 'containers', 'pod', podId] as const,

  images: (endpointId: string) => [...ep(endpointId), 'images'] as const,
  imageInspect: (endpointId: string, ref: string) => [...ep(endpointId), 'images', 'inspect', ref] as const,

  engineInfo: (endpointId: string) => [...ep(endpointId), 'info'] as const,
  runtimeConditions: (endpointId: string) => [...ep(endpointId), 'conditions'] as const,
  cniConfig: (endpointId: string) => [...ep(endpointId), 'cni'] as const,
  /** every preview of the create form (a conf dir change invalidates them all) */
  previews: (endpointId: string) => [...ep(endpointId), 'preview'] as const,
  preview: (endpointId: string, config: PodSandboxConfigInput, ipPreference: IpPreference | undefined) =>
    [...ep(endpointId), 'preview', config, ipPreference ?? null] as const,

  /** the CNI lab (local engine only), apart from the endpoint's cache: a pod action does not touch it */
  lab: (endpointId: string) => ['lab', endpointId] as const,
  labRuns: (endpointId: string) => ['lab', endpointId, 'runs'] as const,
  labRun: (endpointId: string, id: string) => ['lab', endpointId, 'run', id] as const,
  labDiff: (endpointId: string, a: string, b: string) => ['lab', endpointId, 'diff', a, b] as const,
  labValidate: (endpointId: string, text: string) => ['lab', endpointId, 'validate', text] as const,
  labPods: (endpointId: string) => ['lab', endpointId, 'pods'] as const,
};

/** whether a cached query is one pod's status on this endpoint, and which pod */
export function podOfStatusKey(key: readonly unknown[], endpointId: string): string | undefined {
  return key[0] === 'ep' && key[1] === endpointId && key[2] === 'pod' && key.length === 4 ? String(key[3]) : undefined;
}
