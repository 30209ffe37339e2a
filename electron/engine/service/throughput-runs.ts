/** Throughput measurements of sandboxes: one per sandbox at a time, since two transfers through one veth would halve each other. */
import { PodscopeError } from '../../../shared/domain/errors';
import type { ThroughputOptions, ThroughputReport } from '../../../shared/domain/measure';
import type { SandboxEvent } from '../../../shared/domain/sandbox';
import type { ThroughputDeps } from '../throughput/deps';
import { measureThroughput } from '../throughput/measure';

export class ThroughputRuns {
  private readonly measuring = new Set<string>();

  constructor(
    /** undefined: this engine has no throughput meter */
    private readonly deps: ThroughputDeps | undefined,
    private readonly emit: (e: SandboxEvent) => void,
  ) {}

  async run(id: string, opts: ThroughputOptions = {}, signal?: AbortSignal): Promise<ThroughputReport> {
    const deps = this.deps;
    if (!deps) throw new PodscopeError('FailedPrecondition', 'this engine has no throughput meter');
    const key = deps.pods.resolve(id) ?? id;
    if (this.measuring.has(key))
      throw new PodscopeError('FailedPrecondition', `a throughput measurement of sandbox ${key} is already running`);
    this.measuring.add(key);
    try {
      return await measureThroughput(
        { deps, signal, onProgress: (progress) => this.emit({ type: 'sandbox.measureProgress', id: key, progress }) },
        id,
        opts,
      );
    } finally {
      this.measuring.delete(key);
    }
  }
}
