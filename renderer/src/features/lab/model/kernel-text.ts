/**
 * A kernel fact as the lab shows it. The engine records qdiscs as tc's JSON reports them (rate in bytes per second,
 * burst in bytes, bare numbers): shown with units, the rate in bit/s like every other rate on screen.
 */
import type { LabKernelKind } from '../../../../../shared/domain/lab';
import { byteRateAsBits, byteSize } from '../../../lib/format';

export function kernelFactText(kind: LabKernelKind, what: string): string {
  if (kind !== 'qdisc') return what;
  return what
    .replace(/\brate (\d+)\b/, (_, n: string) => `rate ${byteRateAsBits(Number(n))}`)
    .replace(/\bburst (\d+)\b/, (_, n: string) => `burst ${byteSize(Number(n))}`);
}
