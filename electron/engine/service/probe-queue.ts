/**
 * Reachability probes of sandboxes, one at a time and never beside a container start: both want the pod's container
 * ports (port-gate.ts). The last report per sandbox is kept for the detail view; close() cancels a probe in flight.
 */
import { notSupported, PodscopeError } from '../../../shared/domain/errors';
import type { ProbeReport } from '../../../shared/domain/probe';
import { probeSandbox } from '../probe/probe';
import type { ProbeNet } from '../netns/probe-net';
import type { EngineContext } from '../pods/context';
import type { PortGate } from './port-gate';
import { notFoundError } from '../pods/store';

export class ProbeQueue {
  private readonly abort = new AbortController();
  private readonly last = new Map<string, ProbeReport>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly net: ProbeNet | undefined,
    private readonly gate: PortGate,
  ) {}

  get available(): boolean {
    return this.net !== undefined;
  }

  /** @param trace also trace each path's connection through the kernel (see trace/) */
  enqueue(id: string, trigger: ProbeReport['trigger'], trace = false): Promise<ProbeReport> {
    const net = this.net;
    if (!net) return Promise.reject(notSupported('probe', 'this engine has no reachability probe'));
    return this.gate.withExclusive(async () => {
      if (this.abort.signal.aborted) throw new PodscopeError('Canceled', 'the engine is closing');
      const report = await probeSandbox(this.ctx, net, id, { trigger, signal: this.abort.signal, trace });
      if (this.ctx.store.get(report.sandboxId)) this.last.set(report.sandboxId, report);
      return report;
    });
  }

  async lastOf(idOrPrefix: string): Promise<ProbeReport | null> {
    const id = this.ctx.store.index.resolve(idOrPrefix);
    if (id === undefined || !this.ctx.store.get(id)) throw notFoundError(idOrPrefix);
    return this.last.get(id) ?? null;
  }

  /** cancels a probe in flight (it stops and ends its agents) */
  close(): void {
    this.abort.abort();
  }
}
