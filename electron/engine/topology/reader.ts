/**
 * The topology's read over the one kernel reader: links with addresses, routes and bridge ports on the host and links
 * in each netns, at once; then the ingress tc filters of the host veths whose peers are in those netns (where the
 * bandwidth plugin redirects to its ifb). build.ts interprets it.
 */
import type { KernelReader } from '../kernel/types';
import { hostPeersOf, type RawTopology } from './build';

export type { RawTopology } from './build';

export interface TopologyReader {
  read(netnsPaths: string[], signal?: AbortSignal): Promise<RawTopology>;
}

export class KernelTopologyReader implements TopologyReader {
  constructor(private readonly kernel: KernelReader) {}

  async read(netnsPaths: string[], signal?: AbortSignal): Promise<RawTopology> {
    const [host, ...pods] = await Promise.all([
      this.kernel.read(undefined, { links: true, routes: true, bridgePorts: true }, { signal }),
      ...netnsPaths.map((p) => this.kernel.read(p, { links: true }, { signal })),
    ]);
    const peers = hostPeersOf(
      host.links,
      pods.flatMap((p) => p.links),
    );
    const filters =
      peers.length > 0
        ? await this.kernel.read(undefined, { ingressFilters: { devices: peers.map((l) => l.name) } }, { signal })
        : undefined;
    return {
      host: { links: host.links, routes: host.routes, bridgePorts: host.bridgePorts, ingressFilters: filters?.ingressFilters ?? [] },
      pods: Object.fromEntries(netnsPaths.map((p, i) => [p, pods[i]!.links])),
      errors: [host, ...pods, ...(filters ? [filters] : [])].flatMap((s) => s.errors),
    };
  }
}
