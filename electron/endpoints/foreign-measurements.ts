/**
 * The measuring verbs of an added CRI endpoint (containerd, CRI-O): made by this process on the pods the runtime
 * describes (engine/service/foreign-measurer.ts), built on first use so an endpoint that is only listed never loads
 * the measuring code or its touch points. The CLI's `--endpoint` and the app's endpoint tabs both go through here,
 * so the two cannot answer differently. The runtime only describes its pods: lifecycle verbs stay CRI calls to it.
 */
import type { LabRecordedAdd } from '../../shared/domain/lab';
import type { MeasurementApi, SandboxApi, SandboxEvent } from '../../shared/domain/sandbox';
import type { ForeignMeasurements, ForeignSource } from '../engine/api';
import type { CriEndpointApi } from '../cri/client/endpoint-api-types';

/** The probe and live verbs a foreign pod answers here instead of over CRI (which refuses them). */
export type ForeignPodVerbs = Pick<SandboxApi, 'probe' | 'lastProbe' | 'live'>;

export interface LazyForeignMeasurer extends MeasurementApi, ForeignPodVerbs {
  /** the pod's ADD as libcni's cache keeps it (the lab's compare with a live endpoint pod) */
  recordedAdd(id: string): Promise<LabRecordedAdd>;
  /** the measurer's events (a throughput run's progress), from the moment it is built */
  subscribe(listener: (e: SandboxEvent) => void): () => void;
  close(): void;
}

/** The endpoint's pods as the measurer reads them: verbose statuses and the runtime's CNI view, over its CRI client. */
export function foreignSourceOf(cri: CriEndpointApi, describe: string): ForeignSource {
  return {
    sandboxes: (ids) => cri.foreignSandboxes(ids),
    cniConfig: () => cri.cniConfig(),
    describe,
  };
}

export function lazyForeignMeasurer(make: () => Promise<ForeignMeasurements>): LazyForeignMeasurer {
  let made: Promise<ForeignMeasurements> | undefined;
  let closed = false;
  const listeners = new Set<(e: SandboxEvent) => void>();
  const get = () => {
    if (!made) {
      made = make().then((m) => {
        m.subscribe((e) => listeners.forEach((l) => l(e)));
        return m;
      });
      // a failed build is not kept: the next verb tries again (the runtime may have been restarting)
      made.catch(() => {
        made = undefined;
      });
    }
    return made;
  };
  return {
    probe: async (id, opts) => (await get()).probe(id, opts),
    lastProbe: async (id) => (made ? (await made).lastProbe(id) : null),
    live: async (id) => (await get()).live(id),
    throughput: async (id, opts) => (await get()).throughput(id, opts),
    topology: async (id) => (await get()).topology(id),
    networkTopology: async (n) => (await get()).networkTopology(n),
    cniCheck: async (id) => (await get()).cniCheck(id),
    cniStatus: async () => (await get()).cniStatus(),
    recordedAdd: async (id) => (await get()).recordedAdd(id),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      void made?.then(
        (m) => m.close(),
        () => undefined,
      );
    },
  };
}
