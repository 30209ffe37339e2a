/**
 * The facts a list row lacks, read one row at a time in the background: a pod's network facts (one non-verbose
 * PodSandboxStatus) and an exited container's exit code (one ContainerStatus). A few calls are in flight at once,
 * and what they find is pushed in batches. A pod's facts are cached by id until its state changes (a stopped pod's
 * network is torn down), so a row is never asked about twice while nothing about it changes.
 */
import type { ContainerSummary } from '../../shared/domain/container';
import type { EndpointDelta } from '../../shared/domain/endpoints';
import type { RowNetworkFacts, SandboxSummary } from '../../shared/domain/sandbox';

export interface RowFactsOptions {
  networkOf(id: string): Promise<RowNetworkFacts>;
  /** absent: exited containers are listed without their exit code */
  exitOf?(id: string): Promise<Pick<ContainerSummary, 'exitCode' | 'reason'>>;
  /** the follower's current rows (undefined before the first list) */
  pods(): Map<string, SandboxSummary> | undefined;
  containers(): Map<string, ContainerSummary> | undefined;
  /** the endpoint answered a call */
  answered(): void;
  push(delta: EndpointDelta): void;
  concurrency: number;
  flushMs: number;
}

export class RowFacts {
  /** "p:<pod id>" or "c:<container id>" */
  private readonly queue = new Set<string>();
  private workers = 0;
  private readonly podsReady = new Map<string, SandboxSummary>();
  private readonly containersReady = new Map<string, ContainerSummary>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** pods whose network facts are current (read, or carried by an event) */
  private readonly known = new Set<string>();
  private closed = false;

  constructor(private readonly o: RowFactsOptions) {}

  /** Reads the network facts of these pods unless they are known already. */
  wantNetwork(ids: Iterable<string>): void {
    for (const id of ids) if (!this.known.has(id)) this.queue.add(`p:${id}`);
    this.startWorkers();
  }

  /** Reads the exit facts of these containers. */
  wantExit(ids: string[]): void {
    for (const id of ids) this.queue.add(`c:${id}`);
    this.startWorkers();
  }

  /** These pods' facts may have changed (new rows, a state change): the next want reads them again. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.known.delete(id);
  }

  /** An event carried this pod's facts. */
  markKnown(id: string): void {
    this.known.add(id);
  }

  isKnown(id: string): boolean {
    return this.known.has(id);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.flushTimer);
    this.queue.clear();
  }

  private startWorkers(): void {
    while (this.workers < this.o.concurrency && this.queue.size > this.workers) void this.work();
  }

  private async work(): Promise<void> {
    this.workers++;
    try {
      while (!this.closed && this.queue.size > 0) {
        const key = this.queue.values().next().value as string;
        this.queue.delete(key);
        if (key.startsWith('c:')) await this.fillExit(key.slice(2));
        else await this.fillNetwork(key.slice(2));
      }
    } finally {
      this.workers--;
      if (this.workers === 0 && this.queue.size === 0) this.flush();
    }
  }

  private async fillNetwork(id: string): Promise<void> {
    if (!this.o.pods()?.has(id) || this.known.has(id)) return;
    let facts: RowNetworkFacts;
    try {
      facts = await this.o.networkOf(id);
      this.o.answered();
    } catch {
      return; // removed between list and status: the next list drops it
    }
    const pods = this.o.pods();
    const row = pods?.get(id);
    if (!pods || !row) return;
    this.known.add(id);
    if (
      row.ip === facts.ip &&
      row.hostNetwork === facts.hostNetwork &&
      row.additionalIps.join() === facts.additionalIps.join() &&
      JSON.stringify(row.hostPorts) === JSON.stringify(facts.hostPorts)
    )
      return;
    const updated = { ...row, ...facts };
    pods.set(id, updated);
    this.podsReady.set(id, updated);
    this.scheduleFlush();
  }

  private async fillExit(id: string): Promise<void> {
    if (!this.o.exitOf || !this.o.containers()?.has(id)) return;
    let facts: Pick<ContainerSummary, 'exitCode' | 'reason'>;
    try {
      facts = await this.o.exitOf(id);
      this.o.answered();
    } catch {
      return; // removed meanwhile
    }
    const containers = this.o.containers();
    const c = containers?.get(id);
    if (!containers || !c || (c.exitCode === facts.exitCode && c.reason === facts.reason)) return;
    const updated = { ...c, ...facts };
    containers.set(id, updated);
    this.containersReady.set(id, updated);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = setTimeout(() => this.flush(), this.o.flushMs);
    this.flushTimer.unref();
  }

  private flush(): void {
    this.flushTimer = undefined;
    if (this.podsReady.size === 0 && this.containersReady.size === 0) return;
    const upserts = [...this.podsReady.values()];
    const cUpserts = [...this.containersReady.values()];
    this.podsReady.clear();
    this.containersReady.clear();
    this.o.push({ pods: { upserts, removed: [] }, containers: { upserts: cUpserts, removed: [] } });
  }
}
