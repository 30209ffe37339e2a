/**
 * Follows the pods and containers of one CRI endpoint so the UI never polls it: the main process holds the last
 * list, and pushes only the rows that changed.
 *
 * - A runtime that serves GetContainerEvents (containerd ≥ 1.7, Podscope) is listed once, then followed by its
 *   event stream; a sandbox event carries the pod's status, so a changed row costs no extra RPC. An app container's
 *   event re-lists containers (one ListContainers, debounced). A stream that ends is re-opened and the list re-synced.
 * - Any other runtime is re-listed at most every `relistMs` with ONE ListPodSandbox and ONE ListContainers, diffed
 *   against the last list.
 *
 * ListPodSandbox carries no network facts (pod IP, host network): those come from one non-verbose PodSandboxStatus
 * per row that is new or whose state changed, fetched in the background a few at a time after the list is already
 * shown; likewise one ContainerStatus for an exited container's exit code. Unchanged rows are never asked about
 * again, so an idle endpoint costs one or two RPCs per re-list.
 */
import type { ContainerSummary } from '../../shared/domain/container';
import type { EndpointDelta, ListDelta } from '../../shared/domain/endpoints';
import type { SandboxEvent, SandboxSummary } from '../../shared/domain/sandbox';

/** What the follower needs of a CRI client (CriEndpointApi has all of it). */
export interface FollowerSource {
  listOnce(): Promise<SandboxSummary[]>;
  listContainersOnce(): Promise<ContainerSummary[]>;
  networkOf(id: string): Promise<Pick<SandboxSummary, 'ip' | 'additionalIps' | 'hostNetwork'>>;
  /** absent: exited containers are listed without their exit code */
  exitOf?(id: string): Promise<Pick<ContainerSummary, 'exitCode' | 'reason'>>;
  subscribe(listener: (e: SandboxEvent) => void, onError?: (e: Error) => void, onContainerEvent?: () => void): () => void;
}

export interface PodFollowerOptions {
  source: FollowerSource;
  /** the runtime serves GetContainerEvents (probed by the registry) */
  events: boolean;
  /** re-list period without events (ms), default 5000 */
  relistMs?: number;
  /** wait before re-opening an event stream that ended (ms), default 3000 */
  eventsRetryMs?: number;
  /** PodSandboxStatus calls in flight at once while filling network facts, default 4 */
  statusConcurrency?: number;
  /** network facts are pushed in batches at most this often (ms), default 250 */
  flushMs?: number;
  /** rows that changed (never called with an empty delta) */
  onDelta(delta: EndpointDelta): void;
  /** a list or the event stream failed: the endpoint may be gone (the registry checks it at once) */
  onFailure?(e: Error): void;
}

export interface PodFollower {
  /** the current rows; the first call waits for the first list, and a follower whose last list failed lists again */
  pods(): Promise<SandboxSummary[]>;
  containers(): Promise<ContainerSummary[]>;
  /** when the endpoint last answered one of the follower's calls (ms since epoch; 0 when never) */
  readonly lastAnswerAt: number;
  /** the event stream is open (a runtime that dies ends it, so no ping is needed to notice) */
  readonly streaming: boolean;
  /** the follower's lists and event stream are working */
  readonly healthy: boolean;
  /** re-list now (the endpoint came back) */
  resync(): Promise<void>;
  close(): void;
}

type NetFacts = Pick<SandboxSummary, 'ip' | 'additionalIps' | 'hostNetwork'>;

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}

/** the list facts of a sandbox row are the same (network facts are compared separately: the list lacks them) */
export function sameSandboxListFacts(a: SandboxSummary, b: SandboxSummary): boolean {
  return (
    a.state === b.state &&
    a.createdAtNs === b.createdAtNs &&
    a.runtimeHandler === b.runtimeHandler &&
    a.metadata.name === b.metadata.name &&
    a.metadata.namespace === b.metadata.namespace &&
    a.metadata.uid === b.metadata.uid &&
    a.metadata.attempt === b.metadata.attempt &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.annotations, b.annotations)
  );
}

export function sameContainer(a: ContainerSummary, b: ContainerSummary): boolean {
  return (
    a.state === b.state &&
    a.podSandboxId === b.podSandboxId &&
    a.createdAtNs === b.createdAtNs &&
    a.image === b.image &&
    a.imageRef === b.imageRef &&
    a.name === b.name &&
    a.metadata.attempt === b.metadata.attempt &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.annotations, b.annotations)
  );
}

/**
 * The delta from the last list to a new one, and the new map. `changed` rows keep the network facts the previous
 * row had (the list does not carry them); `needNet` names the rows whose facts must be (re)read: new rows and rows
 * whose state changed (a stopped pod's network is torn down).
 */
export function diffSandboxes(
  prev: ReadonlyMap<string, SandboxSummary>,
  listed: SandboxSummary[],
): { next: Map<string, SandboxSummary>; delta: ListDelta<SandboxSummary>; needNet: string[] } {
  const next = new Map<string, SandboxSummary>();
  const upserts: SandboxSummary[] = [];
  const needNet: string[] = [];
  for (const row of listed) {
    const old = prev.get(row.id);
    if (old && sameSandboxListFacts(old, row)) {
      next.set(row.id, old); // unchanged: the same object, so the renderer keeps the row's identity
      continue;
    }
    const merged = old ? { ...row, ip: old.ip, additionalIps: old.additionalIps, hostNetwork: old.hostNetwork } : row;
    next.set(row.id, merged);
    upserts.push(merged);
    if (!old || old.state !== row.state) needNet.push(row.id);
  }
  const removed: string[] = [];
  for (const id of prev.keys()) if (!next.has(id)) removed.push(id);
  return { next, delta: { upserts, removed }, needNet };
}

/**
 * Like diffSandboxes for containers: ListContainers has no exit code or reason, so `needExit` names the containers
 * that are exited and new or just exited (one ContainerStatus each); others keep what they had.
 */
export function diffContainers(
  prev: ReadonlyMap<string, ContainerSummary>,
  listed: ContainerSummary[],
): { next: Map<string, ContainerSummary>; delta: ListDelta<ContainerSummary>; needExit: string[] } {
  const next = new Map<string, ContainerSummary>();
  const upserts: ContainerSummary[] = [];
  const needExit: string[] = [];
  for (const c of listed) {
    const old = prev.get(c.id);
    if (old && sameContainer(old, c)) {
      next.set(c.id, old);
      continue;
    }
    const merged = old ? { ...c, exitCode: old.exitCode, reason: old.reason } : c;
    next.set(c.id, merged);
    upserts.push(merged);
    if (c.state === 'CONTAINER_EXITED' && old?.state !== 'CONTAINER_EXITED') needExit.push(c.id);
  }
  const removed: string[] = [];
  for (const id of prev.keys()) if (!next.has(id)) removed.push(id);
  return { next, delta: { upserts, removed }, needExit };
}

const nonEmpty = <T>(d: ListDelta<T> | undefined): d is ListDelta<T> => !!d && (d.upserts.length > 0 || d.removed.length > 0);

export function createPodFollower(opts: PodFollowerOptions): PodFollower {
  const { source } = opts;
  const relistMs = opts.relistMs ?? 5000;
  const eventsRetryMs = opts.eventsRetryMs ?? 3000;
  const concurrency = opts.statusConcurrency ?? 4;
  const flushMs = opts.flushMs ?? 250;

  let pods: Map<string, SandboxSummary> | undefined;
  let containers: Map<string, ContainerSummary> | undefined;
  let lastAnswerAt = 0;
  let healthy = false;
  let streaming = false;
  let closed = false;
  let listing: Promise<void> | undefined;
  let relistTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let containersTimer: NodeJS.Timeout | undefined;
  let stopStream: (() => void) | undefined;
  /** events that arrived while a list was in flight: applied after it, so the older list cannot undo them */
  let heldEvents: SandboxEvent[] | undefined;

  const answered = () => {
    lastAnswerAt = Date.now();
  };
  const fail = (e: unknown) => {
    healthy = false;
    if (!closed) opts.onFailure?.(e as Error);
  };
  const push = (delta: EndpointDelta) => {
    const out: EndpointDelta = {};
    if (nonEmpty(delta.pods)) out.pods = delta.pods;
    if (nonEmpty(delta.containers)) out.containers = delta.containers;
    if (!closed && (out.pods || out.containers)) opts.onDelta(out);
  };

  // ---- network facts (pods) and exit facts (containers), filled a few at a time, pushed in batches ----
  /** "p:<pod id>" or "c:<container id>" */
  const netQueue = new Set<string>();
  let netWorkers = 0;
  const netReady = new Map<string, SandboxSummary>();
  const exitReady = new Map<string, ContainerSummary>();
  let flushTimer: NodeJS.Timeout | undefined;
  const flushNet = () => {
    flushTimer = undefined;
    if (netReady.size === 0 && exitReady.size === 0) return;
    const upserts = [...netReady.values()];
    const cUpserts = [...exitReady.values()];
    netReady.clear();
    exitReady.clear();
    push({ pods: { upserts, removed: [] }, containers: { upserts: cUpserts, removed: [] } });
  };
  const fillExit = async (id: string) => {
    if (!source.exitOf || !containers?.has(id)) return;
    let facts: Pick<ContainerSummary, 'exitCode' | 'reason'>;
    try {
      facts = await source.exitOf(id);
      answered();
    } catch {
      return; // removed meanwhile
    }
    const c = containers?.get(id);
    if (!c || (c.exitCode === facts.exitCode && c.reason === facts.reason)) return;
    const updated = { ...c, ...facts };
    containers!.set(id, updated);
    exitReady.set(id, updated);
    scheduleFlush();
  };
  const scheduleFlush = () => {
    if (flushTimer || closed) return;
    flushTimer = setTimeout(flushNet, flushMs);
    flushTimer.unref();
  };
  const netWorker = async () => {
    netWorkers++;
    try {
      while (!closed && netQueue.size > 0) {
        const key = netQueue.values().next().value as string;
        netQueue.delete(key);
        if (key.startsWith('c:')) {
          await fillExit(key.slice(2));
          continue;
        }
        const id = key.slice(2);
        if (!pods?.has(id)) continue;
        let facts: NetFacts;
        try {
          facts = await source.networkOf(id);
          answered();
        } catch {
          continue; // removed between list and status: the next list drops it
        }
        const row = pods?.get(id);
        if (!row) continue;
        if (row.ip === facts.ip && row.hostNetwork === facts.hostNetwork && row.additionalIps.join() === facts.additionalIps.join())
          continue;
        const updated = { ...row, ...facts };
        pods!.set(id, updated);
        netReady.set(id, updated);
        scheduleFlush();
      }
    } finally {
      netWorkers--;
      if (netWorkers === 0 && netQueue.size === 0) flushNet();
    }
  };
  const wantNet = (ids: string[], kind: 'p' | 'c' = 'p') => {
    for (const id of ids) netQueue.add(`${kind}:${id}`);
    while (netWorkers < concurrency && netQueue.size > netWorkers) void netWorker();
  };

  // ---- lists ----
  const applyEvent = (e: SandboxEvent) => {
    if (!pods) return;
    if (e.type === 'sandbox.removed') {
      if (pods.delete(e.id)) push({ pods: { upserts: [], removed: [e.id] } });
    } else if (e.type === 'sandbox.added' || e.type === 'sandbox.changed') {
      const old = pods.get(e.id);
      // an event's status has the network facts already; a stop event without them keeps none
      const row = { ...e.summary };
      if (old && sameSandboxListFacts(old, row) && old.ip === row.ip && old.hostNetwork === row.hostNetwork) return;
      pods.set(e.id, row);
      push({ pods: { upserts: [row], removed: [] } });
    }
  };

  const relist = (): Promise<void> => {
    listing ??= (async () => {
      heldEvents = [];
      try {
        const [listedPods, listedContainers] = await Promise.all([source.listOnce(), source.listContainersOnce()]);
        answered();
        healthy = true;
        const p = diffSandboxes(pods ?? new Map(), listedPods);
        const c = diffContainers(containers ?? new Map(), listedContainers);
        pods = p.next;
        containers = c.next;
        push({ pods: p.delta, containers: c.delta });
        wantNet(p.needNet);
        wantNet(c.needExit, 'c');
      } catch (e) {
        fail(e);
        throw e;
      } finally {
        const held = heldEvents ?? [];
        heldEvents = undefined;
        listing = undefined;
        for (const e of held) applyEvent(e);
      }
    })();
    return listing;
  };

  const relistContainers = async () => {
    containersTimer = undefined;
    if (closed || !containers) return;
    try {
      const c = diffContainers(containers, await source.listContainersOnce());
      answered();
      containers = c.next;
      push({ containers: c.delta });
      wantNet(c.needExit, 'c');
    } catch (e) {
      fail(e);
    }
  };

  const scheduleRelist = () => {
    if (closed || opts.events) return;
    clearTimeout(relistTimer);
    relistTimer = setTimeout(() => {
      relist().then(scheduleRelist, scheduleRelist);
    }, relistMs);
    relistTimer.unref();
  };

  const openStream = () => {
    if (closed) return;
    streaming = true;
    stopStream = source.subscribe(
      (e) => {
        answered();
        if (heldEvents) heldEvents.push(e);
        else applyEvent(e);
      },
      (e) => {
        streaming = false;
        stopStream = undefined;
        fail(e);
        if (closed) return;
        retryTimer = setTimeout(() => {
          openStream();
          // events may have been missed while the stream was down
          relist().catch(() => undefined);
        }, eventsRetryMs);
        retryTimer.unref();
      },
      () => {
        if (containersTimer || closed) return;
        // a burst of container events costs one ListContainers
        containersTimer = setTimeout(() => void relistContainers(), 200);
        containersTimer.unref();
      },
    );
  };

  // start: the event stream first (so nothing between the list and the stream is lost), then the first list
  if (opts.events) openStream();
  relist().then(scheduleRelist, scheduleRelist);

  return {
    async pods() {
      if (!pods || !healthy) await relist();
      return [...pods!.values()];
    },
    async containers() {
      if (!containers || !healthy) await relist();
      return [...containers!.values()];
    },
    get lastAnswerAt() {
      return lastAnswerAt;
    },
    get streaming() {
      return streaming;
    },
    get healthy() {
      return healthy;
    },
    async resync() {
      await relist();
    },
    close() {
      closed = true;
      clearTimeout(relistTimer);
      clearTimeout(retryTimer);
      clearTimeout(containersTimer);
      clearTimeout(flushTimer);
      netQueue.clear();
      stopStream?.();
    },
  };
}
