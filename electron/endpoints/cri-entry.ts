/**
 * One added CRI endpoint: its client, what the router gets of it (lists answered by its follower), its probed
 * capabilities, its image and streaming clients, and the follower that keeps its rows.
 */
import type { EndpointCapabilities, EndpointView } from '../../shared/domain/endpoints';
import type { ContainerFilter } from '../../shared/domain/container';
import type { SandboxFilter } from '../../shared/domain/sandbox';
import type { CriEndpointApi } from '../cri/client/cri-endpoint-api';
import type { CriImageApi } from '../cri/client/cri-image-api';
import type { ContainerStreaming } from '../engine/api';
import type { LazyForeignMeasurer } from './foreign-measurements';
import type { PodFollower } from './pod-follower';

export type LazyMeasurer = LazyForeignMeasurer;

export interface CriEntry {
  id: string;
  label: string;
  api: CriEndpointApi;
  /** what the router gets: the client, with its unfiltered lists answered from the follower */
  routed: CriEndpointApi;
  view: EndpointView;
  /** the ImageService client, opened on first use */
  images?: Promise<CriImageApi>;
  streaming?: ContainerStreaming;
  follower: PodFollower;
  /** the measurements this process makes on the runtime's pods (absent for a Podscope daemon) */
  measurer?: LazyMeasurer;
  /** when the last ping was answered */
  pingedAt?: number;
  stopConnectionWatch?: () => void;
}

/**
 * The client as the router sees it: an unfiltered pod or container list is the follower's (no RPC at all); a
 * filtered one (the CLI, a pod's own containers) still asks the runtime. The probe and the live view are the
 * measurer's, made here on the pod the runtime describes (CRI itself refuses them).
 */
export function routedApi(api: CriEndpointApi, follower: PodFollower, measurer?: LazyMeasurer): CriEndpointApi {
  return {
    ...api,
    ...(measurer && { probe: measurer.probe, lastProbe: measurer.lastProbe, live: measurer.live }),
    list: (filter?: SandboxFilter) => (filter && Object.keys(filter).length > 0 ? api.list(filter) : follower.pods()),
    listContainers: (filter?: ContainerFilter) =>
      filter && Object.values(filter).some((v) => v !== undefined && v !== '') ? api.listContainers(filter) : follower.containers(),
  };
}

export async function probeCapabilities(api: CriEndpointApi): Promise<EndpointCapabilities> {
  const isPodscope = await api.isPodscope();
  const [cniConfig, events, streaming] = await Promise.all([
    api.cniConfig().then(
      () => true,
      () => false,
    ),
    api.supportsEvents(),
    api.supportsStreaming(),
  ]);
  return {
    pluginTrace: isPodscope,
    preview: false,
    cniConfig,
    events,
    liveNetwork: false,
    images: true,
    streaming,
    measurements: false,
    lab: false,
  };
}

/** The view of a just-connected endpoint. */
export function newEndpointView(
  id: string,
  address: string,
  socketPath: string,
  version: { runtimeName: string; runtimeVersion: string },
  capabilities: EndpointCapabilities,
  label?: string,
): EndpointView {
  return {
    id,
    kind: 'cri',
    // short enough for the sidebar's selector; the full socket path is shown under it
    label: label ?? `${version.runtimeName} · ${socketPath.split('/').pop() || socketPath}`,
    address,
    runtimeName: version.runtimeName,
    runtimeVersion: version.runtimeVersion,
    connected: true,
    capabilities,
  };
}

/** Ends everything the entry holds open: the connection watch, the follower, the client, the image client. */
export function closeEntry(e: CriEntry): void {
  e.stopConnectionWatch?.();
  e.follower.close();
  e.measurer?.close();
  e.api.close();
  const pending = e.images;
  e.images = undefined;
  void pending?.then(
    (c) => c.close(),
    () => {},
  );
}
