/**
 * A synthetic CRI runtime.v1 endpoint for the UI benchmark and the list-follower tests: a real grpc-js server on a
 * unix socket that answers Version, Status, ListPodSandbox, PodSandboxStatus, ListContainers and (optionally)
 * GetContainerEvents from N generated pods, counting every RPC by method. Without `events` GetContainerEvents is
 * left unimplemented, as containerd 1.6 does, so a client must re-list; `listContainers: false` answers ListContainers
 * with UNIMPLEMENTED, as an old or partial runtime does. Nothing here touches the host network: the
 * pod IPs are only strings.
 */
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import * as pb from '../electron/cri/generated/runtime_v1';

export interface SyntheticPod {
  id: string;
  name: string;
  namespace: string;
  uid: string;
  ready: boolean;
  createdAtNs: string;
  labels: Record<string, string>;
  ip: string;
}

/** deterministic pods (but for their creation times): ids are 64 hex chars, names pod-<i>, 20 namespaces, 50 apps; every 10th is not ready */
export function generatePods(n: number, seed = 1): SyntheticPod[] {
  const pods: SyntheticPod[] = [];
  let x = seed >>> 0 || 1;
  const rnd = () => {
    // xorshift32: the same pods every run
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  // created over the last n seconds, newest last: ages from seconds to hours, as on a busy node
  const base = BigInt(Date.now() - n * 1000) * 1_000_000n;
  for (let i = 0; i < n; i++) {
    let id = '';
    while (id.length < 64) id += rnd().toString(16).padStart(8, '0');
    pods.push({
      id: id.slice(0, 64),
      name: `pod-${i}`,
      namespace: `ns-${i % 20}`,
      uid: `uid-${i}`,
      ready: i % 10 !== 9,
      createdAtNs: String(base + BigInt(i) * 1_000_000_000n),
      labels: { app: `app-${i % 50}`, tier: i % 3 === 0 ? 'frontend' : 'backend' },
      ip: `10.${100 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}`,
    });
  }
  return pods;
}

export interface SyntheticCri {
  readonly socketPath: string;
  readonly pods: SyntheticPod[];
  /** RPCs answered (or streams opened) per method since start */
  counts(): Record<string, number>;
  /** the pods a PodSandboxStatus was asked for (their IPs are all a client can know) */
  statusedIds(): ReadonlySet<string>;
  total(): number;
  /** change a pod (state flip) and tell open event streams */
  flip(id: string): void;
  /** add a pod and tell open event streams */
  add(pod: SyntheticPod): void;
  remove(id: string): void;
  close(): Promise<void>;
}

const state = (p: SyntheticPod) => (p.ready ? pb.PodSandboxState.SANDBOX_READY : pb.PodSandboxState.SANDBOX_NOTREADY);

function toPodSandbox(p: SyntheticPod): pb.PodSandbox {
  return {
    id: p.id,
    metadata: { name: p.name, uid: p.uid, namespace: p.namespace, attempt: 0 },
    state: state(p),
    createdAt: p.createdAtNs,
    labels: p.labels,
    annotations: {},
    runtimeHandler: '',
  };
}

function toStatus(p: SyntheticPod): pb.PodSandboxStatus {
  return {
    id: p.id,
    metadata: { name: p.name, uid: p.uid, namespace: p.namespace, attempt: 0 },
    state: state(p),
    createdAt: p.createdAtNs,
    network: { ip: p.ip, additionalIps: [] },
    linux: undefined,
    labels: p.labels,
    annotations: {},
    runtimeHandler: '',
  };
}

export async function startSyntheticCri(opts: {
  socketPath: string;
  pods: number | SyntheticPod[];
  events: boolean;
  /** false: ListContainers is left unimplemented, as an old or partial runtime might (default: served, empty) */
  listContainers?: boolean;
}): Promise<SyntheticCri> {
  const pods = typeof opts.pods === 'number' ? generatePods(opts.pods) : [...opts.pods];
  const byId = new Map(pods.map((p) => [p.id, p]));
  const counts: Record<string, number> = {};
  const statused = new Set<string>();
  const count = (m: string) => {
    counts[m] = (counts[m] ?? 0) + 1;
  };
  const streams = new Set<ServerWritableStream<pb.GetEventsRequest, pb.ContainerEventResponse>>();
  const emit = (p: SyntheticPod, type: pb.ContainerEventType) => {
    for (const s of streams)
      s.write({
        containerId: p.id,
        containerEventType: type,
        createdAt: String(Date.now() * 1e6),
        podSandboxStatus: toStatus(p),
        containersStatuses: [],
      });
  };
  type Cb<T> = (e: { code: number; details: string } | null, r?: T) => void;
  const impl: UntypedServiceImplementation = {
    version: (_call: unknown, cb: Cb<pb.VersionResponse>) => {
      count('Version');
      cb(null, { version: '0.1.0', runtimeName: 'synthetic', runtimeVersion: '1.0.0', runtimeApiVersion: 'v1' });
    },
    status: (_call: unknown, cb: Cb<pb.StatusResponse>) => {
      count('Status');
      cb(null, { status: { conditions: [] }, info: {}, runtimeHandlers: [], features: undefined });
    },
    listPodSandbox: (call: { request: pb.ListPodSandboxRequest }, cb: Cb<pb.ListPodSandboxResponse>) => {
      count('ListPodSandbox');
      const f = call.request.filter;
      const items = f?.id ? [byId.get(f.id)].filter((p): p is SyntheticPod => !!p) : [...byId.values()];
      cb(null, { items: items.map(toPodSandbox) });
    },
    podSandboxStatus: (call: { request: pb.PodSandboxStatusRequest }, cb: Cb<pb.PodSandboxStatusResponse>) => {
      count('PodSandboxStatus');
      statused.add(call.request.podSandboxId);
      const p = byId.get(call.request.podSandboxId);
      if (!p) return cb({ code: GrpcStatus.NOT_FOUND, details: `no sandbox ${call.request.podSandboxId}` });
      cb(null, { status: toStatus(p), info: {}, timestamp: '0' });
    },
  };
  impl.listContainers = (_call: unknown, cb: Cb<pb.ListContainersResponse>) => {
    count('ListContainers');
    // what grpc-js answers for a method a server does not implement, but counted
    if (opts.listContainers === false) return cb({ code: GrpcStatus.UNIMPLEMENTED, details: 'unknown method ListContainers' });
    cb(null, { containers: [] });
  };
  if (opts.events)
    impl.getContainerEvents = (stream: ServerWritableStream<pb.GetEventsRequest, pb.ContainerEventResponse>) => {
      count('GetContainerEvents');
      streams.add(stream);
      stream.on('cancelled', () => streams.delete(stream));
      stream.on('close', () => streams.delete(stream));
    };
  const server = new Server();
  // methods left out of impl answer UNIMPLEMENTED (grpc-js's default handler), like an older runtime
  server.addService(pb.RuntimeServiceService, impl);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${opts.socketPath}`, ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );
  return {
    socketPath: opts.socketPath,
    pods,
    counts: () => ({ ...counts }),
    statusedIds: () => statused,
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    flip(id) {
      const p = byId.get(id);
      if (!p) return;
      p.ready = !p.ready;
      emit(p, p.ready ? pb.ContainerEventType.CONTAINER_STARTED_EVENT : pb.ContainerEventType.CONTAINER_STOPPED_EVENT);
    },
    add(p) {
      byId.set(p.id, p);
      emit(p, pb.ContainerEventType.CONTAINER_CREATED_EVENT);
    },
    remove(id) {
      const p = byId.get(id);
      if (!p) return;
      byId.delete(id);
      emit(p, pb.ContainerEventType.CONTAINER_DELETED_EVENT);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.end();
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000).unref();
      }),
  };
}
