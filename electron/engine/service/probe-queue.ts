/**
 * Reachability probes of sandboxes, one at a time and never beside a container start: both want the pod's container
 * ports (port-gate.ts). The last report per sandbox is kept for the detail view; close() cancels a probe in flight.
 */
import { notSupported, PodscopeError } from '../../../shared/domain/errors';
import type { ProbeReport } from '../../../shared/domain/probe';
import type { ProbeDeps } from '../probe/deps';
import { probeSandbox } from '../probe/probe';
import type { PortGate } from './port-gate';
import { closeController } from '../common/close-signal';

export class ProbeQueue {
  private readonly abort = closeController();
  private readonly last = new Map<string, ProbeReport>();

  constructor(
    /** undefined: this engine has no reachability probe */
    private readonly deps: ProbeDeps | undefined,
    private readonly gate: PortGate,
  ) {}

  get available(): boolean {
    return this.deps !== undefined;
  }

  /** @param trace also trace each path's connection through the kernel (see trace/) */
  enqueue(
    id: string,
    trigger: ProbeReport['trigger'],
    trace = false,
    more: { dnsName?: string; mtu?: boolean } = {},
  ): Promise<ProbeReport> {
    const deps = this.deps;
    if (!deps) return Promise.reject(notSupported('probe', 'this engine has no reachability probe'));
    return this.gate.withExclusive(async () => {
      if (this.abort.signal.aborted) throw new PodscopeError('Canceled', 'the engine is closing');
      const report = await probeSandbox(deps, id, { trigger, signal: this.abort.signal, trace, ...more });
      if (deps.pods.find(report.sandboxId)) this.last.set(report.sandboxId, report);
      return report;
    });
  }

  async lastOf(idOrPrefix: string, pods: ProbeDeps['pods']): Promise<ProbeReport | null> {
    const pod = pods.get(idOrPrefix);
    return this.last.get(pod.id) ?? null;
  }

  /** cancels a probe in flight (it stops and ends its agents) */
  close(): void {
    this.abort.abort();
  }
}
