/** What a throughput measurement needs from the rest of the engine; service/ fills it. */
import type { LiveNetworkView } from '../../../shared/domain/live';
import type { PodFacts, PodLookup } from '../common/pod-facts';
import type { ThroughputMeter } from './types';

export interface ThroughputDeps {
  pods: PodLookup;
  meter: ThroughputMeter;
  /** the namespace pinned at this path is gone */
  netnsClosed(path: string): Promise<boolean>;
  /** the pod's live view (its tbf qdiscs on these host devices, as the kernel has them) */
  liveView(pod: PodFacts & { netnsPath: string }, hostDevices: string[], signal?: AbortSignal): Promise<LiveNetworkView>;
}
