/** The OS touch point of a throughput measurement: one bulk TCP transfer, timed by its receiver. */
import type { ByteSample } from './rate';

export interface TransferSpec {
  /** ingress: the host sends to the pod; egress: the pod sends to the host */
  direction: 'ingress' | 'egress';
  /** the pod's network namespace */
  netnsPath: string;
  /** where the receiver listens: the pod IP (ingress) or the bridge gateway address on the host (egress) */
  listenAddress: string;
  /** time bound from the first byte */
  durationMs: number;
  /** byte bound for the sender */
  maxBytes: number;
  onSample?: (s: ByteSample) => void;
  /** asked after each sample: true ends the transfer there (the rate is known well enough) */
  enough?: (samples: ByteSample[]) => boolean;
  signal?: AbortSignal;
}

export interface TransferOutcome {
  samples: ByteSample[];
  /** "host → 10.88.0.5:40123 (pod netns)" */
  path: string;
}

export interface ThroughputMeter {
  /** Runs one transfer to its end (time, bytes or error); every process it started has exited when it returns. */
  transfer(spec: TransferSpec): Promise<TransferOutcome>;
}
