/**
 * SandboxApi over any CRI runtime.v1 endpoint (containerd, CRI-O, a Podscope daemon). What CRI cannot carry is
 * refused with Unimplemented rather than approximated: config previews, a per-request IP preference, and engine
 * info from runtimes other than Podscope.
 */
import { PodSandboxConfigSchema, formatIssues, NamespaceMode } from '../../../shared/domain/config';
import { PodscopeError, invalidArgument, isNotSupported, notSupported } from '../../../shared/domain/errors';
import type { CniConfigView } from '../../../shared/domain/cni';
import type {
  EngineInfo,
  RuntimeCondition,
  SandboxApi,
  SandboxEvent,
  SandboxFilter,
  SandboxStatus,
  SandboxSummary,
} from '../../../shared/domain/sandbox';
import { connectivityState, type ClientReadableStream } from '@grpc/grpc-js';
import * as pb from '../generated/runtime_v1';
import { configToProto } from '../convert/config';
import {
  containerConfigToProto,
  containerFromProto,
  containerStateToProto,
  resourcesToProto,
  statsFromProto,
  statusFromProto,
} from '../convert/container';
import {
  ContainerConfigSchema,
  type ContainerApi,
  type ContainerFilter,
  type ContainerStats,
  type ContainerStatusView,
  type ContainerSummary,
  type ExecSyncResult,
} from '../../../shared/domain/container';
import { stateToProto } from '../convert/sandbox';
import { RUNTIME_NAME } from '../server/version';
import { CNI_LOAD_OK, STATUS_INFO_CNI_KEY, STATUS_INFO_CNI_LOAD_KEY, STATUS_INFO_CONFIG_KEY } from '../server/runtime-status';
import { fromGrpcError } from '../errors';
import { connectCri, type CriConnection, type CriConnectionOptions } from './connection';
import { normalizeAddress } from '../address';
import { CniConfigViewSchema, decodePeerJson, EngineInfoSchema } from './peer-schemas';
import { decodeGoCniConfig } from './decode-cni-config';
import { decodeSandboxStatus, podSandboxToSummary } from './decode-status';
import type { ContainerStreaming } from '../../engine/api';
import { criStreaming } from './cri-streaming';

export interface CriEndpointApi extends SandboxApi, ContainerApi {
  /** unix:///abs/path */
  readonly address: string;
  readonly socketPath: string;
  /** Connects (Version RPC, once) and returns the peer's Version; every other call does this first. */
  connect(): Promise<pb.VersionResponse>;
  /** the peer is a Podscope daemon (its verbose info carries the full view, incl. plugin trace) */
  isPodscope(): Promise<boolean>;
  /** Version again, to tell whether the endpoint still answers */
  ping(timeoutMs?: number): Promise<pb.VersionResponse>;
  /** true when GetContainerEvents is served (containerd ≥ 1.7, Podscope); probed, not assumed */
  supportsEvents(): Promise<boolean>;
  /** true when the Exec RPC is served (an Exec for no container is refused by name, not UNIMPLEMENTED); probed */
  supportsStreaming(): Promise<boolean>;
  /** GetContainerEvents as SandboxEvents (sandbox events only); onError gets stream failures */
  subscribe(listener: (e: SandboxEvent) => void, onError?: (e: PodscopeError) => void, onContainerEvent?: () => void): () => void;
  /**
   * One ListPodSandbox and nothing else: the summaries without the network facts (ip, host network) that only
   * PodSandboxStatus carries. The endpoint follower lists this way so a list costs one RPC whatever the pod count.
   */
  listOnce(): Promise<SandboxSummary[]>;
  /** One ListContainers and nothing else (no per-container status for exit codes). */
  listContainersOnce(): Promise<ContainerSummary[]>;
  /** One non-verbose PodSandboxStatus: the facts a list row needs that ListPodSandbox lacks. */
  networkOf(id: string): Promise<Pick<SandboxSummary, 'ip' | 'additionalIps' | 'hostNetwork'>>;
  /**
   * Called when the connection to the runtime drops (the channel leaves READY: a daemon that exits closes its
   * socket). Costs no RPC, so a lost endpoint is noticed at once without pinging it.
   */
  onConnectionLost(listener: () => void): () => void;
  /** One non-verbose ContainerStatus: the exit code and reason an exited container's list entry lacks. */
  exitOf(id: string): Promise<Pick<ContainerSummary, 'exitCode' | 'reason'>>;
  /** exec, attach and port-forward through the endpoint's Exec/Attach/PortForward URLs (cri-streaming.ts) */
  readonly streaming: ContainerStreaming;
  close(): void;
}

/** How many PodSandboxStatus calls list() has in flight at once. */
export const LIST_STATUS_CONCURRENCY = 8;

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** What CRI cannot carry: `feature` names it for the one NotSupportedError, `what` for the person. */
const unimplemented = (feature: string, what: string, runtime: string) =>
  notSupported(feature, `${what} is not available from ${runtime} over CRI`);

/**
 * Synchronous so callers (CLI, registry) can hold it at once; the connection and the Version check happen on
 * first use (or on connect()), and an unreachable or non-CRI socket rejects that call with Unavailable naming it.
 */
export function createCriEndpointApi(address: string, opts: CriConnectionOptions = {}): CriEndpointApi {
  const target = normalizeAddress(address);
  let connecting: Promise<CriConnection> | undefined;
  let closed = false;
  const connected = (): Promise<CriConnection> => {
    if (closed) return Promise.reject(new PodscopeError('Unavailable', `CRI endpoint ${target.socketPath} was closed`));
    // a failed attempt is forgotten so the next call retries (the runtime may start later)
    connecting ??= connectCri(target.address, opts).catch((e: unknown) => {
      connecting = undefined;
      throw e;
    });
    return connecting;
  };
  const describe = (conn: CriConnection) => `${conn.version.runtimeName} ${conn.version.runtimeVersion}`;
  const isPodscopeConn = (conn: CriConnection) => conn.version.runtimeName === RUNTIME_NAME;
  const statusInfo = async (conn: CriConnection): Promise<Record<string, string>> =>
    (await conn.call((c) => c.status, { verbose: true })).info;
  const statusOf = (conn: CriConnection, id: string, verbose: boolean) =>
    conn.call((c) => c.podSandboxStatus, { podSandboxId: id, verbose });

  const api: CriEndpointApi = {
    address: target.address,
    socketPath: target.socketPath,
    streaming: criStreaming(connected),
    async connect() {
      return (await connected()).version;
    },
    async isPodscope() {
      return isPodscopeConn(await connected());
    },

    async run(req) {
      const conn = await connected();
      if (req.ipPreference !== undefined) throw unimplemented('ipPreference', 'a per-sandbox IP preference', describe(conn));
      const parsed = PodSandboxConfigSchema.safeParse(req.config);
      if (!parsed.success) throw invalidArgument(`invalid sandbox config: ${formatIssues(parsed.error).join('; ')}`);
      const res = await conn.call((c) => c.runPodSandbox, { config: configToProto(parsed.data), runtimeHandler: req.runtimeHandler ?? '' });
      return { id: res.podSandboxId };
    },
    async stop(id) {
      const conn = await connected();
      await conn.call((c) => c.stopPodSandbox, { podSandboxId: id });
    },
    async remove(id) {
      const conn = await connected();
      await conn.call((c) => c.removePodSandbox, { podSandboxId: id });
    },
    async status(id): Promise<SandboxStatus> {
      const conn = await connected();
      return decodeSandboxStatus(await statusOf(conn, id, true), conn.version.runtimeName, conn.socketPath);
    },
    async list(filter?: SandboxFilter): Promise<SandboxSummary[]> {
      const conn = await connected();
      const res = await conn.call((c) => c.listPodSandbox, {
        filter: pb.PodSandboxFilter.fromPartial({
          id: filter?.id ?? '',
          labelSelector: filter?.labelSelector ?? {},
          ...(filter?.state && { state: { state: stateToProto(filter.state) } }),
        }),
      });
      const items = res.items
        .filter((p) => filter?.name === undefined || p.metadata?.name === filter.name)
        .filter((p) => filter?.namespace === undefined || p.metadata?.namespace === filter.namespace)
        .map(podSandboxToSummary);
      // ListPodSandbox carries no network facts: fill ip / host network from a (cheap, non-verbose) status each,
      // at most LIST_STATUS_CONCURRENCY at a time (a runtime with hundreds of pods is not sent hundreds at once).
      await forEachLimited(items, LIST_STATUS_CONCURRENCY, async (s) => {
        try {
          const st = (await statusOf(conn, s.id, false)).status;
          s.ip = st?.network?.ip ?? '';
          s.additionalIps = (st?.network?.additionalIps ?? []).map((a) => a.ip);
          s.hostNetwork = st?.linux?.namespaces?.options?.network === NamespaceMode.NODE;
        } catch {
          // removed between list and status: keep the list facts
        }
      });
      return items;
    },
    async listOnce() {
      const conn = await connected();
      const res = await conn.call((c) => c.listPodSandbox, { filter: undefined });
      return res.items.map(podSandboxToSummary);
    },
    async listContainersOnce() {
      const conn = await connected();
      const res = await conn.call((c) => c.listContainers, { filter: undefined });
      return res.containers.map(containerFromProto);
    },
    async networkOf(id) {
      const conn = await connected();
      const st = (await statusOf(conn, id, false)).status;
      return {
        ip: st?.network?.ip ?? '',
        additionalIps: (st?.network?.additionalIps ?? []).map((a) => a.ip),
        hostNetwork: st?.linux?.namespaces?.options?.network === NamespaceMode.NODE,
      };
    },
    onConnectionLost(listener) {
      let stopped = false;
      connected().then(
        (conn) => {
          const channel = conn.client.getChannel();
          const watch = () => {
            if (stopped) return;
            try {
              const state = channel.getConnectivityState(false);
              channel.watchConnectivityState(state, Infinity, () => {
                if (stopped) return;
                if (state === connectivityState.READY && channel.getConnectivityState(false) !== connectivityState.READY) listener();
                watch();
              });
            } catch {
              // the channel was shut down (the endpoint was closed): nothing left to watch
            }
          };
          watch();
        },
        () => undefined,
      );
      return () => {
        stopped = true;
      };
    },
    async exitOf(id) {
      const conn = await connected();
      const st = (await conn.call((c) => c.containerStatus, { containerId: id, verbose: false })).status;
      return { exitCode: st?.exitCode ?? 0, reason: st?.reason ?? '' };
    },
    async cniConfig(): Promise<CniConfigView> {
      const conn = await connected();
      const info = await statusInfo(conn);
      const raw = info[STATUS_INFO_CNI_KEY];
      const loadStatus = info[STATUS_INFO_CNI_LOAD_KEY];
      if (!raw && loadStatus !== undefined && loadStatus !== CNI_LOAD_OK) {
        throw new PodscopeError(
          'FailedPrecondition',
          `${describe(conn)} at ${conn.socketPath} could not load its CNI configuration: ${loadStatus.slice(0, 4096)}`,
        );
      }
      if (!raw) throw unimplemented('cniConfig', 'the CNI configuration', describe(conn));
      if (isPodscopeConn(conn)) return decodePeerJson(CniConfigViewSchema, raw, conn.socketPath, 'a Podscope CNI configuration');
      try {
        return decodeGoCniConfig(raw);
      } catch (e) {
        throw new PodscopeError(
          'Internal',
          `CRI endpoint ${conn.socketPath} sent a CNI configuration that cannot be read: ${(e as Error).message}`,
          { details: { endpoint: conn.socketPath } },
        );
      }
    },
    async live() {
      // the kernel view needs the netns on this host and the engine's own records; CRI carries neither
      throw unimplemented('liveNetwork', "the kernel's live view of a pod network", describe(await connected()));
    },
    async probe() {
      // the probe enters the pod's netns on this host, which CRI does not expose
      throw unimplemented('probe', 'a reachability probe', describe(await connected()));
    },
    async lastProbe() {
      return null;
    },
    async preview() {
      throw unimplemented('preview', 'a config preview', describe(await connected()));
    },
    async runtimeConditions(): Promise<RuntimeCondition[]> {
      const conn = await connected();
      const res = await conn.call((c) => c.status, { verbose: false });
      return (res.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
    },
    async info(): Promise<EngineInfo> {
      const conn = await connected();
      const raw = isPodscopeConn(conn) ? (await statusInfo(conn))[STATUS_INFO_CONFIG_KEY] : undefined;
      if (!raw) throw unimplemented('engineInfo', 'engine info', describe(conn));
      return decodePeerJson(EngineInfoSchema, raw, conn.socketPath, 'Podscope engine info');
    },
    async createContainer(req) {
      const conn = await connected();
      const parsed = ContainerConfigSchema.safeParse(req.config);
      if (!parsed.success) throw invalidArgument(`invalid container config: ${formatIssues(parsed.error).join('; ')}`);
      const sandboxConfig = req.sandboxConfig ? PodSandboxConfigSchema.safeParse(req.sandboxConfig) : undefined;
      const res = await conn.call((c) => c.createContainer, {
        podSandboxId: req.podSandboxId,
        config: containerConfigToProto(parsed.data),
        sandboxConfig: sandboxConfig?.success ? configToProto(sandboxConfig.data) : undefined,
      });
      return { id: res.containerId };
    },
    async startContainer(id) {
      await (await connected()).call((c) => c.startContainer, { containerId: id });
    },
    async stopContainer(id, timeoutSeconds) {
      // the client deadline must outlast the stop timeout (crictl adds its own timeout the same way)
      await (
        await connected()
      ).call((c) => c.stopContainer, { containerId: id, timeout: String(timeoutSeconds) }, (timeoutSeconds + 30) * 1000);
    },
    async removeContainer(id) {
      await (await connected()).call((c) => c.removeContainer, { containerId: id });
    },
    async containerStatus(id): Promise<ContainerStatusView> {
      const conn = await connected();
      const res = await conn.call((c) => c.containerStatus, { containerId: id, verbose: true });
      if (!res.status) throw new PodscopeError('Internal', `CRI endpoint ${conn.socketPath} sent a ContainerStatus without a status`);
      let info: {
        sandboxID?: string;
        pid?: number;
        config?: ContainerStatusView['config'];
        runtimeSpec?: unknown;
        podscope?: Partial<ContainerStatusView>;
      } = {};
      try {
        info = JSON.parse(res.info.info ?? '{}') as typeof info;
      } catch {
        // another runtime's info may not be JSON; the status alone still says a lot
      }
      const view = statusFromProto(res.status, info.sandboxID ?? '');
      if (info.pid) view.pid = info.pid;
      if (info.runtimeSpec !== undefined) view.ociSpec = info.runtimeSpec;
      if (info.config && typeof info.config === 'object' && 'metadata' in info.config) view.config = info.config;
      const p = info.podscope;
      if (p)
        Object.assign(view, {
          seccomp: p.seccomp ?? '',
          apparmor: p.apparmor ?? '',
          stopSignal: p.stopSignal ?? '',
          ...(p.shimPid !== undefined && { shimPid: p.shimPid }),
          name: p.name ?? view.name,
        });
      return view;
    },
    async listContainers(filter?: ContainerFilter): Promise<ContainerSummary[]> {
      const conn = await connected();
      const res = await conn.call((c) => c.listContainers, {
        filter: pb.ContainerFilter.fromPartial({
          id: filter?.id ?? '',
          podSandboxId: filter?.podSandboxId ?? '',
          labelSelector: filter?.labelSelector ?? {},
          ...(filter?.state && { state: { state: containerStateToProto(filter.state) } }),
        }),
      });
      const items = res.containers.map(containerFromProto);
      // Container has no exit code or reason: a (non-verbose) status per exited one fills them in, bounded
      await forEachLimited(
        items.filter((c) => c.state === 'CONTAINER_EXITED'),
        LIST_STATUS_CONCURRENCY,
        async (c) => {
          const st = (await conn.call((x) => x.containerStatus, { containerId: c.id, verbose: false }).catch(() => undefined))?.status;
          if (st) Object.assign(c, { exitCode: st.exitCode, reason: st.reason });
        },
      );
      return items;
    },
    async execSync(id, cmd, timeoutSeconds): Promise<ExecSyncResult> {
      const conn = await connected();
      const res = await conn.call(
        (c) => c.execSync,
        { containerId: id, cmd, timeout: String(timeoutSeconds) },
        timeoutSeconds > 0 ? (timeoutSeconds + 30) * 1000 : undefined,
      );
      return { stdout: new Uint8Array(res.stdout), stderr: new Uint8Array(res.stderr), exitCode: res.exitCode };
    },
    async updateContainerResources(id, resources) {
      await (
        await connected()
      ).call((c) => c.updateContainerResources, { containerId: id, linux: resourcesToProto(resources), annotations: {} });
    },
    async containerStats(id): Promise<ContainerStats> {
      const res = await (await connected()).call((c) => c.containerStats, { containerId: id });
      if (!res.stats) throw new PodscopeError('NotFound', `no stats for container ${id}`);
      return statsFromProto(res.stats);
    },
    async listContainerStats(filter) {
      const res = await (
        await connected()
      ).call((c) => c.listContainerStats, {
        filter: pb.ContainerStatsFilter.fromPartial({
          id: filter?.id ?? '',
          podSandboxId: filter?.podSandboxId ?? '',
          labelSelector: filter?.labelSelector ?? {},
        }),
      });
      return res.stats.map((s) => statsFromProto(s));
    },
    async reopenContainerLog(id) {
      await (await connected()).call((c) => c.reopenContainerLog, { containerId: id });
    },
    async ping(timeoutMs = 2000) {
      const conn = await connected();
      return conn.call((c) => c.version, { version: '0.1.0' }, timeoutMs);
    },
    async supportsEvents() {
      const conn = await connected();
      return new Promise<boolean>((resolve) => {
        const stream = conn.events();
        // An unserved method fails at once; a served one just stays open, so a quiet stream after a short wait is "yes".
        const timer = setTimeout(() => {
          stream.cancel();
          resolve(true);
        }, 500);
        stream.on('error', (e: { code?: number }) => {
          clearTimeout(timer);
          resolve(e.code === 1 /* CANCELLED by us */);
        });
        stream.on('data', () => undefined);
      });
    },
    async supportsStreaming() {
      const conn = await connected();
      // nothing runs: no container has the empty id, so a runtime that serves Exec refuses it (NotFound or
      // InvalidArgument) before any URL is made
      return conn
        .call((c) => c.exec, { containerId: '', cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false })
        .then(
          () => true,
          (e: unknown) => !isNotSupported(e),
        );
    },
    subscribe(listener, onError, onContainerEvent) {
      let cancelled = false;
      let stream: ClientReadableStream<pb.ContainerEventResponse> | undefined;
      connected().then(
        (conn) => {
          if (cancelled) return;
          stream = conn.events();
          forwardSandboxEvents(stream, listener, onContainerEvent);
          stream.on('error', (e) => {
            if (!cancelled) onError?.(fromGrpcError(e, conn.address));
          });
        },
        (e: unknown) => onError?.(e as PodscopeError),
      );
      return () => {
        cancelled = true;
        stream?.cancel();
      };
    },
    close() {
      closed = true;
      connecting?.then(
        (c) => c.close(),
        () => undefined,
      );
    },
  };
  return api;
}

/** CRI container events ⇒ SandboxEvents. containerd also reports app containers; a sandbox's own events have container id = sandbox id. */
function forwardSandboxEvents(
  stream: ClientReadableStream<pb.ContainerEventResponse>,
  listener: (e: SandboxEvent) => void,
  onContainerEvent?: () => void,
): void {
  const T = pb.ContainerEventType;
  stream.on('data', (ev: pb.ContainerEventResponse) => {
    const st = ev.podSandboxStatus;
    // an app container's event (its id is not the sandbox's): the caller re-lists containers if it cares
    if (st && st.id !== ev.containerId) onContainerEvent?.();
    if (!st || st.id !== ev.containerId) return;
    const summary = podSandboxToSummary(st);
    summary.ip = st.network?.ip ?? '';
    summary.additionalIps = (st.network?.additionalIps ?? []).map((a) => a.ip);
    summary.hostNetwork = st.linux?.namespaces?.options?.network === NamespaceMode.NODE;
    if (ev.containerEventType === T.CONTAINER_CREATED_EVENT) listener({ type: 'sandbox.added', id: st.id, summary });
    else if (ev.containerEventType === T.CONTAINER_DELETED_EVENT) listener({ type: 'sandbox.removed', id: st.id });
    else listener({ type: 'sandbox.changed', id: st.id, summary });
  });
}
