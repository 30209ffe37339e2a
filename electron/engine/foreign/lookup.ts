/**
 * The PodLookup the measuring features get for a CRI endpoint's pods: one snapshot of the endpoint (its list and a
 * verbose status each), every pod resolved by resolve.ts. A pod that could not be resolved is still found by its id,
 * and `get` throws what resolving it said (which fact, where it looked); it is left out of `all()`, so it is never
 * probed as a peer with half its facts.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { podNotFound, type PodLookup } from '../common/pod-facts';
import type { NodeFiles } from './deps';
import { resolveForeignPod, type ForeignPodFacts, type ForeignResolveOptions, type ForeignSandbox } from './resolve';

export class ForeignPods implements PodLookup<ForeignPodFacts> {
  private constructor(
    private readonly pods: Map<string, ForeignPodFacts>,
    private readonly failed: Map<string, PodscopeError>,
  ) {}

  static async resolve(files: NodeFiles, sandboxes: ForeignSandbox[], opts: ForeignResolveOptions): Promise<ForeignPods> {
    const pods = new Map<string, ForeignPodFacts>();
    const failed = new Map<string, PodscopeError>();
    for (const s of sandboxes) {
      try {
        pods.set(s.status.id, await resolveForeignPod(files, s, opts));
      } catch (e) {
        failed.set(s.status.id, e instanceof PodscopeError ? e : new PodscopeError('Internal', (e as Error).message, { cause: e }));
      }
    }
    return new ForeignPods(pods, failed);
  }

  resolve(idOrPrefix: string): string | undefined {
    const ids = [...this.pods.keys(), ...this.failed.keys()];
    if (ids.includes(idOrPrefix)) return idOrPrefix;
    const matches = ids.filter((id) => id.startsWith(idOrPrefix));
    return matches.length === 1 ? matches[0] : undefined;
  }

  get(idOrPrefix: string): ForeignPodFacts {
    const id = this.resolve(idOrPrefix);
    if (id === undefined) throw podNotFound(idOrPrefix);
    const failure = this.failed.get(id);
    if (failure) throw failure;
    return this.pods.get(id)!;
  }

  find(idOrPrefix: string): ForeignPodFacts | undefined {
    const id = this.resolve(idOrPrefix);
    return id === undefined ? undefined : this.pods.get(id);
  }

  all(): ForeignPodFacts[] {
    return [...this.pods.values()];
  }
}
