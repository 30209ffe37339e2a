/** A meter that replays a byte curve: line speed until the burst is used, then the tbf rate (unit/UI tests). */
import type { ByteSample } from '../../electron/engine/throughput/rate';
import type { ThroughputMeter, TransferOutcome, TransferSpec } from '../../electron/engine/throughput/types';

export interface FakeCurve {
  /** bytes/ms before the burst is used up */
  lineBytesPerMs: number;
  burstBytes: number;
  /** bytes/ms after */
  shapedBytesPerMs: number;
}

export class FakeThroughputMeter implements ThroughputMeter {
  readonly calls: TransferSpec[] = [];
  /** per direction; tests change them (and failWith) between runs */
  constructor(
    public curves: Partial<Record<'ingress' | 'egress', FakeCurve>> = {},
    public failWith?: Error,
  ) {}

  async transfer(spec: TransferSpec): Promise<TransferOutcome> {
    this.calls.push(spec);
    if (this.failWith) throw this.failWith;
    const c = this.curves[spec.direction] ?? { lineBytesPerMs: 1e6, burstBytes: 0, shapedBytesPerMs: 1e6 };
    const samples: ByteSample[] = [];
    const kneeMs = c.burstBytes / Math.max(1e-9, c.lineBytesPerMs - c.shapedBytesPerMs);
    for (let t = 50; t <= spec.durationMs; t += 50) {
      const bytes = Math.min(
        spec.maxBytes,
        t <= kneeMs ? c.lineBytesPerMs * t : c.lineBytesPerMs * kneeMs + c.shapedBytesPerMs * (t - kneeMs),
      );
      const s = { tMs: t, bytes: Math.round(bytes) };
      // the real sender stops at maxBytes and the receiver ends with it
      if (samples.length > 0 && s.bytes === samples[samples.length - 1]!.bytes) break;
      samples.push(s);
      spec.onSample?.(s);
    }
    return { samples, path: `fake ${spec.direction}` };
  }
}
