/**
 * Host-port clashes between ready sandboxes: derived from the configs, and when two pods claim one port, the winner
 * read from the real DNAT chain (the first rule portmap put there is the one the kernel uses).
 */
import { isHostNetwork } from '../../../shared/domain/config';
import { toCniPortMappings } from '../../../shared/domain/portmap';
import { dnatChainOrder, hostPortConflictsFor, type HostPortConflict, type HostPortHolder } from '../../../shared/domain/probe';
import type { ProbeNet } from '../netns/probe-net';
import type { PodsContext } from './context';
import type { SandboxRecord } from './record';

/** the sandboxes that map a host port (hostNetwork ones included: they are reported as such) */
export function hostPortHolders(ctx: PodsContext): HostPortHolder[] {
  return ctx.store.index.hostPortHolders().map((r) => ({
    id: r.id,
    name: r.name,
    createdAtNs: r.createdAtNs,
    ready: r.state === 'Ready',
    hostNetwork: isHostNetwork(r.config),
    hostPorts: toCniPortMappings(r.config.port_mappings),
  }));
}

/** Other ready sandboxes mapping one of this one's host ports; the winner read from the real chain when there is a clash. */
export async function hostPortConflicts(ctx: PodsContext, probeNet: ProbeNet | undefined, rec: SandboxRecord): Promise<HostPortConflict[]> {
  const holders = hostPortHolders(ctx);
  const derived = hostPortConflictsFor(rec.id, holders);
  if (derived.length === 0 || !probeNet) return derived;
  const rules = await probeNet.hostportDnatRules().catch(() => undefined);
  if (!rules) return derived;
  const v4 = dnatChainOrder(rules.v4);
  const v6 = dnatChainOrder(rules.v6);
  return hostPortConflictsFor(rec.id, holders, (port, proto) => {
    const order = v4(port, proto);
    return order.length ? order : v6(port, proto);
  });
}
