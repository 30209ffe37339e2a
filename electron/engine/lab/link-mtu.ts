/**
 * The MTU of every link a lab run created (the interfaces in its netns and the host links that appeared with ADD),
 * and a warning when the run's interface has a larger MTU than a host link on its path (its host veth, the bridge
 * that veth is a port of): a veth drops a received frame larger than its MTU with no ICMP, so full-size packets from
 * the pod would vanish there while small ones (a TCP connect) cross. Read from the snapshot after ADD.
 */
import type { LabLinkMtu } from '../../../shared/domain/lab';
import type { WatchedState } from './kernel';

export function linkMtus(
  before: WatchedState | undefined,
  afterAdd: WatchedState | undefined,
  ifName: string,
): { links: LabLinkMtu[]; warnings: string[] } {
  if (!afterAdd) return { links: [], warnings: [] };
  const known = new Set((before?.hostLinks ?? []).map((l) => l.ifindex));
  const links: LabLinkMtu[] = [];
  for (const l of afterAdd.netnsLinks)
    if (l.name !== 'lo' && l.mtu !== undefined)
      links.push({ where: 'netns', name: l.name, mtu: l.mtu, ...(l.kind ? { kind: l.kind } : {}) });
  const created = afterAdd.hostLinks.filter((l) => !known.has(l.ifindex));
  for (const l of created)
    if (l.mtu !== undefined)
      links.push({
        where: 'host',
        name: l.name,
        mtu: l.mtu,
        ...(l.kind ? { kind: l.kind } : {}),
        ...(l.master ? { master: l.master } : {}),
      });
  const pod = afterAdd.netnsLinks.find((l) => l.name === ifName);
  const warnings: string[] = [];
  if (pod?.mtu === undefined) return { links, warnings };
  // the host links on the pod's path: the new host links and the bridges they are ports of
  const masters = new Set(created.map((l) => l.master).filter((m): m is string => !!m));
  const onPath = [...created, ...afterAdd.hostLinks.filter((l) => masters.has(l.name) && !created.includes(l))];
  for (const l of onPath)
    if (l.mtu !== undefined && l.mtu < pod.mtu)
      warnings.push(
        `the pod's ${ifName} has MTU ${pod.mtu}, more than host ${l.kind ?? 'link'} ${l.name} on its path (MTU ${l.mtu}): packets over ${l.mtu} bytes vanish there without an ICMP "fragmentation needed"`,
      );
  return { links, warnings };
}
