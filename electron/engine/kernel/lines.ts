/** Kernel facts as one line of text, the way iproute2 prints them, for views and snapshots that compare text. */
import type { KernelRule } from './types';

/** a policy rule as `ip rule` prints it, with its family: `ipv4 100: from 10.80.0.5 lookup 100` */
export function ruleLine(r: KernelRule): string {
  const sel = [
    `from ${r.from}`,
    r.to ? `to ${r.to}` : '',
    r.iif ? `iif ${r.iif}` : '',
    r.oif ? `oif ${r.oif}` : '',
    r.fwmark ? `fwmark ${r.fwmark}` : '',
  ].filter(Boolean);
  const does = r.action && r.action !== 'lookup' ? r.action : r.table ? `lookup ${r.table}` : (r.action ?? '');
  return `ipv${r.family} ${r.priority}: ${[...sel, does].filter(Boolean).join(' ')}`;
}
