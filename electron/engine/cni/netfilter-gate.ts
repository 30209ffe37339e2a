/**
 * A bound on how many execs of the plugins that rewrite the host's netfilter tables run at once, across every sandbox
 * of the engine (docs/semantics.md#netfilter-plugins). On the nf_tables backend no file lock serializes iptables:
 * each iptables process commits against the ruleset generation it read, and a commit that lost the race is refused
 * and redone from a fresh read, so many plugins at once spend the CPU on retries instead of rules.
 */

/** Plugins whose every exec is a run of iptables/ip6tables commands against the host's shared tables. */
export const NETFILTER_PLUGIN_TYPES: ReadonlySet<string> = new Set(['portmap', 'firewall']);

// the default bound is an engine option's default (common/options.ts)
export { DEFAULT_MAX_NETFILTER_PLUGIN_EXECS } from '../common/options';

/** First come, first served; a waiter whose signal aborts leaves the queue. */
export class NetfilterGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /** @param limit execs at once; 0 = no bound */
  constructor(readonly limit: number) {}

  /** execs holding a slot now, and how many wait for one */
  queue(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Runs fn once a slot is free; resolves with how long it waited for one (ms) beside fn's value. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<{ value: T; waitedMs: number }> {
    const t0 = performance.now();
    await this.acquire(signal);
    const waitedMs = performance.now() - t0;
    try {
      return { value: await fn(), waitedMs };
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (this.limit <= 0 || this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    const canceled = () =>
      new Error(`canceled while waiting for one of the ${this.limit} slots for netfilter plugins (portmap, firewall) to free up`);
    if (signal?.aborted) return Promise.reject(canceled());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(canceled());
      };
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.running++;
        resolve();
      };
      this.waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}
