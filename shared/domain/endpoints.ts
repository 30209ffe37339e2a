/**
 * Where sandboxes live: the in-process engine, or any CRI runtime.v1 endpoint (containerd, CRI-O, a Podscope daemon).
 * Every screen works against an endpoint id; "local" is the built-in engine.
 */
import { z } from 'zod';
import type { SandboxApi, SandboxEvent, SandboxSummary } from './sandbox';
import type { ContainerApi, ContainerSummary } from './container';

/** Changes of one list since the last push: whole rows added or changed, ids removed. */
export interface ListDelta<T> {
  upserts: T[];
  removed: string[];
}

/** What an endpoint's list follower pushes after a re-list or an event: only the rows that changed. */
export interface EndpointDelta {
  pods?: ListDelta<SandboxSummary>;
  containers?: ListDelta<ContainerSummary>;
}

export const LOCAL_ENDPOINT_ID = 'local';
export const LOCAL_ENDPOINT_LABEL = 'This machine (built-in engine)';

export type EndpointKind = 'podscope-engine' | 'cri';

/** What a runtime behind an endpoint can give; features it lacks are shown as "not available from this runtime". */
export interface EndpointCapabilities {
  /** per-plugin CNI trace with stdin/stdout (only Podscope's own engine records it) */
  pluginTrace: boolean;
  /** preview of runtimeConfig per plugin (needs the conflist the runtime uses) */
  preview: boolean;
  /** the loaded CNI configuration view */
  cniConfig: boolean;
  /** live events (GetContainerEvents or in-process) */
  events: boolean;
  /**
   * the kernel's view of a pod's network and the reachability probe: the built-in engine's pods, and a CRI runtime's
   * pods on this machine, measured by this process in their netns (not a Podscope daemon's, nor without an engine)
   */
  liveNetwork: boolean;
  /** exec, attach and port-forward */
  streaming: boolean;
  /** an image service the Images page can list, pull into and remove from */
  images: boolean;
  /** throughput, topology, CNI CHECK/STATUS: measured by this process (its own pods, or a CRI runtime's on this machine) */
  measurements: boolean;
  /** the CNI lab (dry-runs of a conflist on this host): the built-in engine only */
  lab: boolean;
  /** ListContainers is served (absent: assumed; false: an old or partial runtime, whose pods are listed without containers) */
  containers?: boolean;
}

/** Every endpoint serves the sandbox and container verbs; the rest is in its capabilities. */
export type EndpointApi = SandboxApi & ContainerApi;

/** The built-in engine gives everything. */
export const LOCAL_ENDPOINT_CAPABILITIES: EndpointCapabilities = {
  pluginTrace: true,
  preview: true,
  cniConfig: true,
  events: true,
  liveNetwork: true,
  streaming: true,
  images: true,
  measurements: true,
  lab: true,
};

export interface EndpointView {
  id: string;
  kind: EndpointKind;
  label: string;
  /** unix socket path for CRI endpoints */
  address?: string;
  /** runtime_name / runtime_version from the CRI Version RPC once connected */
  runtimeName?: string;
  runtimeVersion?: string;
  connected: boolean;
  error?: string;
  capabilities: EndpointCapabilities;
  /** a CRI endpoint's libcni results dir, where its pods' attachments are read */
  cniResultsDir?: string;
}

export interface AddEndpointRequest {
  label?: string;
  /** unix socket path, with or without the unix:// scheme */
  address: string;
  /** where the runtime's libcni keeps its results (default DEFAULT_CNI_RESULTS_DIR): its pods' attachments are read there */
  cniResultsDir?: string;
}

/** libcni's default: results under `<cacheDir>/results`, cacheDir /var/lib/cni (a runtime may set another cacheDir) */
export const DEFAULT_CNI_RESULTS_DIR = '/var/lib/cni/results';

/**
 * The libcni results dir of an endpoint, as the user types it: an absolute, plain path (no `.`/`..` segments, no
 * NUL) ending in `/results`, since libcni always keeps its results in that subdirectory of its cache dir. The
 * messages leave the field's name to the caller (formatIssues puts the path in front).
 */
export const CniResultsDirSchema = z
  .string()
  .trim()
  .max(4096, 'at most 4096 characters')
  .refine((p) => p.startsWith('/'), "must be an absolute path (libcni's default is /var/lib/cni/results)")
  .refine((p) => !p.includes('\0'), 'must not contain a NUL byte')
  .refine((p) => !p.split('/').some((seg) => seg === '.' || seg === '..'), "must not contain '.' or '..' segments")
  .refine(
    (p) => /\/results\/*$/.test(p) && p.replace(/\/+$/, '') !== '/results',
    "must be libcni's results directory, <cache dir>/results (e.g. /var/lib/cni/results)",
  );

/** the libcni cache dir (the engine's cniCacheDir) a results dir belongs to */
export function cniCacheDirOf(resultsDir: string): string {
  return (
    resultsDir
      .trim()
      .replace(/\/+$/, '')
      .replace(/\/results$/, '') || '/'
  );
}

export interface EndpointRegistry {
  list(): Promise<EndpointView[]>;
  /** connects (Version RPC) before adding; a non-CRI or unreachable socket is a clear error */
  add(req: AddEndpointRequest): Promise<EndpointView>;
  remove(id: string): Promise<void>;
  /** gives an added endpoint a new label (the id stays) */
  rename(id: string, label: string): Promise<EndpointView>;
  /** the API for an endpoint id; NotFound for an unknown id */
  api(id: string): EndpointApi;
  /** what the endpoint can do now (the same flags its view carries); NotFound for an unknown id */
  capabilities(id: string): EndpointCapabilities;
  /** sandbox events of the added endpoints that stream them (the built-in engine's come from the engine itself) */
  subscribe?(listener: (endpointId: string, event: SandboxEvent) => void): () => void;
  /** batched row changes of the added endpoints (their followers re-list or follow events; the UI never polls) */
  subscribeDeltas?(listener: (endpointId: string, delta: EndpointDelta) => void): () => void;
  /** the whole list whenever an endpoint is lost, comes back, is added, removed or renamed */
  onChange?(listener: (endpoints: EndpointView[]) => void): () => void;
}
