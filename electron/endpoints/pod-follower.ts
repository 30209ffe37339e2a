/**
 * Follows the pods and containers of one CRI endpoint so the UI never polls it: the main process holds the last
 * list, and pushes only the rows that changed.
 *
 * - A runtime that serves GetContainerEvents (containerd ≥ 1.7, Podscope) is listed once, then followed by its
 *   event stream; a sandbox event carries the pod's status, so a changed row costs no extra RPC. An app container's
 *   event re-lists containers (one ListContainers, debounced). A stream that ends is re-opened and the list re-synced.
 * - Any other runtime is re-listed at most every `relistMs` with ONE ListPodSandbox and ONE ListContainers, diffed
 *   against the last list (list-diff.ts).
 *
 * ListPodSandbox carries no network facts (pod IP, host network): those come from one non-verbose PodSandboxStatus
 * per row, read only for the rows a viewer shows (`showing`), cached by id until the row's state changes
 * (row-facts.ts). At 10,000 pods a window shows a few dozen: an idle endpoint costs one or two RPCs per re-list,
 * whatever its size. Likewise one ContainerStatus for an exited container's exit code.
 *
 * A runtime that does not serve ListContainers (an old or partial CRI implementation) still has its pods listed:
 * its containers are unavailable, said so by `containersAvailable` and by containers() failing Unimplemented.
 */
import type { ContainerSummary } from '../../shared/domain/container';
import type { EndpointDelta, ListDelta } from '../../shared/domain/endpoints';
import { isNotSupported, PodscopeError } from '../../shared/domain/errors';
import type { RowNetworkFacts, SandboxEvent, SandboxSummary } from '../../shared/domain/sandbox';
import { diffContainers, diffSandboxes, sameSandboxListFacts } from './list-diff';
import { RowFacts } from './row-facts';

export { diffContainers, diffSandboxes, sameContainer, sameSandboxListFacts } from './list-diff';

/** What the follower needs of a CRI client (CriEndpointApi has all of it). */
export interface FollowerSource {
  listOnce(): Promise<SandboxSummary[]>;
  listContainersOnce(): Promise<ContainerSummary[]>;
  networkOf(id: string): Promise<RowNetworkFacts>;
  /** absent: exited containers are listed without their exit code */
  exitOf?(id: string): Promise<Pick<ContainerSummary, 'exitCode' | 'reason'>>;
  subscribe(listener: (e: SandboxEvent) => void, onError?: (e: Error) => void, onContainerEvent?: () => void): () => void;
}

export interface PodFollowerOptions {
  source: FollowerSource;
  /** the runtime serves GetContainerEvents (probed by the registry) */
  events: boolean;
  /** false: the runtime is known not to serve ListContainers (never asked); default: asked, and an Unimplemented answer stops asking */
  containers?: boolean;
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
  /** the runtime answered ListContainers with Unimplemented: its containers are unavailable from now on */
  onContainersUnavailable?(): void;
}

export interface PodFollower {
  /** the current rows; the first call waits for the first list, and a follower whose last list failed lists again */
  pods(): Promise<SandboxSummary[]>;
  /** Unimplemented when the runtime does not serve ListContainers */
  containers(): Promise<ContainerSummary[]>;
  /** false once the runtime is known not to serve ListContainers */
  readonly containersAvailable: boolean;
  /**
   * The rows one viewer (a window, a browser tab) shows now, replacing what it showed before: their network facts
   * are read unless known. Rows no viewer shows are never asked about.
   */
  showing(viewer: string, ids: string[]): void;
  /** the viewer went away (its window closed) */
  forgetViewer(viewer: string): void;
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

const nonEmpty = <T>(d: ListDelta<T> | undefined): d is ListDelta<T> => !!d && (d.upserts.length > 0 || d.removed.length > 0);

class Follower implements PodFollower {
  private podRows: Map<string, SandboxSummary> | undefined;
  private containerRows: Map<string, ContainerSummary> | undefined;
  lastAnswerAt = 0;
  healthy = false;
  streaming = false;
  containersAvailable: boolean;
  private closed = false;
  private listing: Promise<void> | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private containersTimer: NodeJS.Timeout | undefined;
  private stopStream: (() => void) | undefined;
  /** events that arrived while a list was in flight: applied after it, so the older list cannot undo them */
  private heldEvents: SandboxEvent[] | undefined;
  private readonly viewers = new Map<string, Set<string>>();
  private readonly facts: RowFacts;

  constructor(private readonly opts: PodFollowerOptions) {
    this.containersAvailable = opts.containers !== false;
    this.facts = new RowFacts({
      networkOf: (id) => opts.source.networkOf(id),
      ...(opts.source.exitOf && { exitOf: (id: string) => opts.source.exitOf!(id) }),
      pods: () => this.podRows,
      containers: () => this.containerRows,
      answered: () => this.answered(),
      push: (d) => this.push(d),
      concurrency: opts.statusConcurrency ?? 4,
      flushMs: opts.flushMs ?? 250,
    });
    // start: the event stream first (so nothing between the list and the stream is lost), then the first list
    if (opts.events) this.openStream();
    this.relist().then(
      () => this.scheduleRelist(),
      () => this.scheduleRelist(),
    );
  }

  async pods(): Promise<SandboxSummary[]> {
    if (!this.podRows || !this.healthy) await this.relist();
    return [...this.podRows!.values()];
  }

  async containers(): Promise<ContainerSummary[]> {
    if (!this.containerRows || !this.healthy) await this.relist();
    if (!this.containersAvailable)
      throw new PodscopeError('Unimplemented', 'this runtime does not serve ListContainers: its containers are unavailable');
    return [...this.containerRows!.values()];
  }

  showing(viewer: string, ids: string[]): void {
    this.viewers.set(viewer, new Set(ids));
    this.facts.wantNetwork(ids.filter((id) => this.podRows?.has(id)));
  }

  forgetViewer(viewer: string): void {
    this.viewers.delete(viewer);
  }

  async resync(): Promise<void> {
    await this.relist();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.relistTimer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.containersTimer);
    this.facts.close();
    this.stopStream?.();
  }

  private shown(id: string): boolean {
    for (const ids of this.viewers.values()) if (ids.has(id)) return true;
    return false;
  }

  private answered(): void {
    this.lastAnswerAt = Date.now();
  }

  private fail(e: unknown): void {
    this.healthy = false;
    if (!this.closed) this.opts.onFailure?.(e as Error);
  }

  private push(delta: EndpointDelta): void {
    const out: EndpointDelta = {};
    if (nonEmpty(delta.pods)) out.pods = delta.pods;
    if (nonEmpty(delta.containers)) out.containers = delta.containers;
    if (!this.closed && (out.pods || out.containers)) this.opts.onDelta(out);
  }

  // ---- lists ----

  private relist(): Promise<void> {
    this.listing ??= (async () => {
      this.heldEvents = [];
      try {
        const [listedPods, listedContainers] = await Promise.all([this.opts.source.listOnce(), this.listContainers()]);
        this.answered();
        this.healthy = true;
        const p = diffSandboxes(this.podRows ?? new Map(), listedPods);
        const c = listedContainers && diffContainers(this.containerRows ?? new Map(), listedContainers);
        this.podRows = p.next;
        this.containerRows = c ? c.next : (this.containerRows ?? new Map());
        this.facts.forget([...p.needNet, ...p.delta.removed]);
        this.push({ pods: p.delta, ...(c && { containers: c.delta }) });
        this.facts.wantNetwork(p.needNet.filter((id) => this.shown(id)));
        if (c) this.facts.wantExit(c.needExit);
      } catch (e) {
        this.fail(e);
        throw e;
      } finally {
        const held = this.heldEvents ?? [];
        this.heldEvents = undefined;
        this.listing = undefined;
        for (const e of held) this.applyEvent(e);
      }
    })();
    return this.listing;
  }

  /** undefined when the runtime does not serve ListContainers (asked once; an Unimplemented answer is remembered) */
  private async listContainers(): Promise<ContainerSummary[] | undefined> {
    if (!this.containersAvailable) return undefined;
    try {
      return await this.opts.source.listContainersOnce();
    } catch (e) {
      if (!isNotSupported(e)) throw e;
      this.containersAvailable = false;
      this.opts.onContainersUnavailable?.();
      return undefined;
    }
  }

  private applyContainers(listed: ContainerSummary[]): void {
    const c = diffContainers(this.containerRows ?? new Map(), listed);
    this.containerRows = c.next;
    this.push({ containers: c.delta });
    this.facts.wantExit(c.needExit);
  }

  private async relistContainers(): Promise<void> {
    this.containersTimer = undefined;
    if (this.closed || !this.containerRows) return;
    try {
      const listed = await this.listContainers();
      this.answered();
      if (listed) this.applyContainers(listed);
    } catch (e) {
      this.fail(e);
    }
  }

  private scheduleRelist(): void {
    if (this.closed || this.opts.events) return;
    clearTimeout(this.relistTimer);
    this.relistTimer = setTimeout(() => {
      this.relist().then(
        () => this.scheduleRelist(),
        () => this.scheduleRelist(),
      );
    }, this.opts.relistMs ?? 5000);
    this.relistTimer.unref();
  }

  // ---- events ----

  private applyEvent(e: SandboxEvent): void {
    const pods = this.podRows;
    if (!pods) return;
    if (e.type === 'sandbox.removed') {
      this.facts.forget([e.id]);
      if (pods.delete(e.id)) this.push({ pods: { upserts: [], removed: [e.id] } });
    } else if (e.type === 'sandbox.added' || e.type === 'sandbox.changed') {
      const old = pods.get(e.id);
      // an event's status has the network facts already; a stop event without them keeps none
      const row = { ...e.summary };
      this.facts.markKnown(e.id);
      if (old && sameSandboxListFacts(old, row) && old.ip === row.ip && old.hostNetwork === row.hostNetwork) return;
      pods.set(e.id, row);
      this.push({ pods: { upserts: [row], removed: [] } });
    }
  }

  private openStream(): void {
    if (this.closed) return;
    this.streaming = true;
    this.stopStream = this.opts.source.subscribe(
      (e) => {
        this.answered();
        if (this.heldEvents) this.heldEvents.push(e);
        else this.applyEvent(e);
      },
      (e) => this.streamEnded(e),
      () => {
        if (this.containersTimer || this.closed) return;
        // a burst of container events costs one ListContainers
        this.containersTimer = setTimeout(() => void this.relistContainers(), 200);
        this.containersTimer.unref();
      },
    );
  }

  private streamEnded(e: Error): void {
    this.streaming = false;
    this.stopStream = undefined;
    this.fail(e);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.openStream();
      // events may have been missed while the stream was down
      this.relist().catch(() => undefined);
    }, this.opts.eventsRetryMs ?? 3000);
    this.retryTimer.unref();
  }
}

export function createPodFollower(opts: PodFollowerOptions): PodFollower {
  return new Follower(opts);
}
