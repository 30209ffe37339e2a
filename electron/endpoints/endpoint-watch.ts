/**
 * Whether each added endpoint still answers, pushed to listeners the moment it flips. A daemon that dies closes no
 * stream the UI could notice (containerd streams no events when it is gone), so while someone listens the watch pings
 * the endpoints every `intervalMs` — except those whose follower heard from them recently: their answers prove them
 * alive, and a dropped connection, a failed list or an ended event stream calls checkNow at once.
 */
import type { EndpointView } from '../../shared/domain/endpoints';
import type { CriEntry } from './cri-entry';

export interface EndpointWatchOptions {
  entries(): CriEntry[];
  /** the whole list as listeners get it */
  snapshot(): EndpointView[];
  /** whether the entry is still registered (a removed one is not reported) */
  isCurrent(e: CriEntry): boolean;
  pingTimeoutMs: number;
  intervalMs: number;
  livenessMs: number;
}

const stateOf = (e: CriEntry) => `${e.view.connected}|${e.view.error ?? ''}`;

export class EndpointWatch {
  private readonly listeners = new Set<(endpoints: EndpointView[]) => void>();
  private timer: NodeJS.Timeout | undefined;
  private watching = false;
  private closed = false;

  constructor(private readonly o: EndpointWatchOptions) {}

  /** Pings the endpoint now and records the answer in its view. */
  async refresh(e: CriEntry): Promise<EndpointView> {
    try {
      const v = await e.api.ping(this.o.pingTimeoutMs);
      e.pingedAt = Date.now();
      e.view = { ...e.view, connected: true, runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion };
      delete e.view.error;
    } catch (err) {
      e.view = { ...e.view, connected: false, error: (err as Error).message };
    }
    return e.view;
  }

  /** a connected endpoint whose follower hears from it needs no ping (idle endpoints cost almost no RPCs) */
  provenAlive(e: CriEntry): boolean {
    return e.view.connected && e.follower.healthy && Date.now() - Math.max(e.follower.lastAnswerAt, e.pingedAt ?? 0) < this.o.livenessMs;
  }

  /** Pings one endpoint at once (its connection dropped, a list failed) and tells listeners when it flipped. */
  async checkNow(e: CriEntry): Promise<void> {
    const before = stateOf(e);
    await this.refresh(e);
    if (!this.closed && this.o.isCurrent(e) && stateOf(e) !== before) this.notify();
  }

  onChange(listener: (endpoints: EndpointView[]) => void): () => void {
    this.listeners.add(listener);
    this.schedule();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        clearTimeout(this.timer);
        this.watching = false;
      }
    };
  }

  notify(): void {
    const list = this.o.snapshot();
    for (const l of this.listeners) {
      try {
        l(list);
      } catch {
        // one broken listener must not starve the others
      }
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private async watchOnce(): Promise<void> {
    const due = this.o.entries().filter((e) => !this.provenAlive(e));
    const before = new Map(due.map((e) => [e.id, stateOf(e)]));
    await Promise.all(due.map((e) => this.refresh(e)));
    const changed = due.some((e) => before.get(e.id) !== stateOf(e));
    // back: re-sync its rows now rather than at the next re-list or stream retry
    for (const e of due) if (e.view.connected && before.get(e.id)?.startsWith('false')) void e.follower.resync().catch(() => undefined);
    if (changed && !this.closed) this.notify();
  }

  private schedule(): void {
    if (this.closed || this.listeners.size === 0 || this.watching) return;
    this.watching = true;
    const tick = () => {
      if (this.closed || this.listeners.size === 0) {
        this.watching = false;
        return;
      }
      void this.watchOnce().finally(() => {
        if (this.closed || this.listeners.size === 0) {
          this.watching = false;
          return;
        }
        this.timer = setTimeout(tick, this.o.intervalMs);
        this.timer.unref();
      });
    };
    this.timer = setTimeout(tick, this.o.intervalMs);
    this.timer.unref();
  }
}
