/** The `topology` and `networkTopology` verbs: which sandboxes to read, then one kernel read for all of them. */
import { PodscopeError } from '../../../shared/domain/errors';
import type { NetworkTopology, PodTopology } from '../../../shared/domain/topology';
import { readyPod, type PodFacts } from '../common/pod-facts';
import type { TopologyDeps } from './deps';
import { buildTopology, type PodWiring } from './build';
import { ownersFromTrace } from './owners';

function wiring(rec: PodFacts & { netnsPath: string }): PodWiring {
  return { sandboxId: rec.id, netnsPath: rec.netnsPath, owners: ownersFromTrace(rec.trace ?? []) };
}

function reader(ctx: TopologyDeps) {
  if (!ctx.reader) throw new PodscopeError('FailedPrecondition', 'this engine has no topology reader');
  return ctx.reader;
}

export async function podTopology(ctx: TopologyDeps, idOrPrefix: string): Promise<PodTopology> {
  const rec = readyPod(ctx.pods, idOrPrefix, 'draw');
  const readAt = new Date().toISOString();
  const raw = await reader(ctx).read([rec.netnsPath]);
  return { id: rec.id, readAt, ...buildTopology(raw, [wiring(rec)]), errors: raw.errors };
}

export async function networkTopology(ctx: TopologyDeps, network: string): Promise<NetworkTopology> {
  const recs = ctx.pods
    .all()
    .filter(
      (r): r is PodFacts & { netnsPath: string } =>
        r.state === 'Ready' && !!r.netnsPath && !r.netnsClosed && (r.network?.networks ?? []).some((n) => n.network === network),
    );
  const readAt = new Date().toISOString();
  const raw = await reader(ctx).read(recs.map((r) => r.netnsPath));
  return {
    network,
    readAt,
    sandboxes: recs.map((r) => ({ id: r.id, name: r.name })),
    ...buildTopology(raw, recs.map(wiring)),
    errors: raw.errors,
  };
}
