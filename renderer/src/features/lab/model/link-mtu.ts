/**
 * The links a lab run created, with their MTU, as the run view lists them: the run's own interface first (the MTU the
 * pod would send with), then the rest of its netns, then the host links ADD added. A host link whose MTU is below the
 * run's interface is marked: a veth drops a received frame larger than its MTU with no ICMP, so full-size packets from
 * the pod would vanish there (the engine's `mtuWarnings` say the same in a sentence, the bridge included).
 */
import type { LabLinkMtu, LabRun } from '../../../../../shared/domain/lab';

export interface LinkMtuRow extends LabLinkMtu {
  /** the interface the run asked for (CNI_IFNAME) */
  runInterface: boolean;
  /** a host link narrower than the run's interface: a black hole for the pod's full-size packets */
  narrower: boolean;
}

export function linkMtuRows(run: Pick<LabRun, 'linkMtus' | 'ifName'>): { rows: LinkMtuRow[]; interfaceMtu?: number } {
  const links = run.linkMtus ?? [];
  const interfaceMtu = links.find((l) => l.where === 'netns' && l.name === run.ifName)?.mtu;
  const rank = (l: LabLinkMtu) => (l.where === 'netns' ? (l.name === run.ifName ? 0 : 1) : 2);
  const rows = links
    .map((l) => ({
      ...l,
      runInterface: l.where === 'netns' && l.name === run.ifName,
      narrower: l.where === 'host' && interfaceMtu !== undefined && l.mtu < interfaceMtu,
    }))
    // stable: the engine's order within each group
    .map((r, i) => ({ r, i }))
    .sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i)
    .map(({ r }) => r);
  return { rows, ...(interfaceMtu !== undefined ? { interfaceMtu } : {}) };
}
