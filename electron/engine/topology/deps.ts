/** What the topology verbs need from the rest of the engine; service/ fills it. */
import type { PodLookup } from '../common/pod-facts';
import type { TopologyReader } from './reader';

export interface TopologyDeps {
  pods: PodLookup;
  /** `ip -j`/`bridge -j` reads of the host and a netns (undefined: topology is not available here) */
  reader: TopologyReader | undefined;
}
