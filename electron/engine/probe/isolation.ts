/**
 * Which probe paths an attachment's plugin forbids by design (docs/semantics.md#reachability-probe). The probe still
 * sends their packets; a path named here that gets no answer is `isolated` (expected), one that gets through is
 * reported as reachable with a note. The decision reads the chain's first plugin (the one that made the interface)
 * and the kernel's facts about the interface: its kind, its parent link and whether the host has a leg of its own.
 *  - macvlan / ipvlan child ↔ an address of its own parent link: the parent's traffic is never handed to its
 *    children, nor theirs to it (the kernel does not hairpin between a lower link and its upper links);
 *  - host ↔ a macvlan / ipvlan child when the host has no child of its own on that parent: the host's packets leave
 *    through the parent itself, the same rule;
 *  - macvlan children of one parent in mode private never talk to each other; in mode vepa only through a switch
 *    that reflects their frames back (802.1Qbg), which a veth or a plain NIC's switch port does not.
 */
import type { ProbedAttachment } from './attachments';

/** pod → an address of the host (`address`), host → pod, or pod ↔ a peer on the same network */
export type IsolationQuery = { kind: 'toHost'; address: string } | { kind: 'fromHost' } | { kind: 'peer' };

/** the kind of child link the attachment is (macvlan, ipvlan), else undefined: nothing else is isolated by design */
export function childKind(att: ProbedAttachment): 'macvlan' | 'ipvlan' | undefined {
  const kind = att.link ? att.link.kind : att.plugins[0]?.type;
  return kind === 'macvlan' || kind === 'ipvlan' ? kind : undefined;
}

/** the rule that forbids this path, naming the plugin; undefined when the design allows it */
export function forbiddenBy(att: ProbedAttachment, q: IsolationQuery): string | undefined {
  const kind = childKind(att);
  if (!kind) return undefined;
  const conf = att.plugins[0]?.type === kind ? att.plugins[0] : undefined;
  const parent = att.link?.parent?.name ?? (typeof conf?.master === 'string' ? conf.master : undefined);
  const parentText = parent ?? "its parent link (the host's default-route link)";
  const noLeg = `the host has no ${kind} of its own on ${parentText}, so it has no leg on this network`;
  const parentRule = `the kernel hands neither the parent's own traffic to its ${kind} children nor theirs to it`;
  switch (q.kind) {
    case 'toHost':
      if (att.link?.parent?.addresses.includes(q.address))
        return `${kind}: a ${kind} child cannot reach its parent link's own addresses (${q.address} is on ${parentText}): ${parentRule}`;
      if (att.link?.hostLeg) return undefined;
      return `${kind}: ${noLeg}; a packet from the pod to the host's ${q.address} leaves through ${parentText} and reaches the host only if something outside loops it back`;
    case 'fromHost':
      if (att.link?.hostLeg) return undefined;
      return `${kind}: ${noLeg}; the host's packets to the pod leave through ${parentText} itself, and ${parentRule}`;
    case 'peer': {
      const mode = typeof conf?.mode === 'string' ? conf.mode.toLowerCase() : kind === 'macvlan' ? 'bridge' : 'l2';
      if (kind === 'macvlan' && mode === 'private')
        return `macvlan (mode private): children of one parent never exchange frames, neither directly nor through the switch`;
      if (kind === 'macvlan' && mode === 'vepa')
        return `macvlan (mode vepa): frames between children of one parent go out through ${parentText} and come back only when the switch on the other end reflects them (802.1Qbg hairpin)`;
      return undefined;
    }
  }
}
