/**
 * Who installed a netfilter rule a traced packet hit, from the rule's comment and chain, matched against this engine's
 * own sandboxes: portmap writes `dnat name: "<net>" id: "<id>"` on its per-pod jump in CNI-HOSTPORT-DNAT (the rules
 * in the CNI-DN-* chain it jumps to carry none, so they inherit the jump's owner), shares CNI-HOSTPORT-SETMARK/-MASQ
 * between every pod; bridge's ipMasq writes `name: "<net>" id: "<id>"` on the POSTROUTING jump to its CNI-<hash>
 * chain; the firewall plugin keeps its rules in CNI-FORWARD/CNI-ADMIN. A rule with an id that is not one of ours is
 * another runtime's, and like a rule without any of these marks (the admin's, Docker's) it is owned by nobody here.
 */
import type { RuleOwner } from '../../../shared/domain/probe';
import type { TraceRuleLine } from '../kernel/netfilter-trace';

export interface KnownSandbox {
  id: string;
  network?: string;
  ips: string[];
}

const COMMENT_ID = /(dnat )?name: \\?"([^"\\]+)\\?" id: \\?"([0-9a-f]+)\\?"/;

export class RuleOwners {
  /** `<family>/<table>/<chain>` → the owner of the jump into it */
  private readonly chainOwners = new Map<string, RuleOwner>();

  constructor(private readonly sandboxes: KnownSandbox[]) {}

  /** call in the order the kernel traced the rules, so a jump is seen before the rules of the chain it enters */
  ownerOf(l: Pick<TraceRuleLine, 'family' | 'table' | 'chain' | 'verdict' | 'rule' | 'what'>): RuleOwner | null {
    const owner = this.resolve(l);
    const target = /^(?:JUMP|GOTO):(.+)$/.exec(l.verdict)?.[1];
    if (owner && target && !target.startsWith('CNI-HOSTPORT-')) this.chainOwners.set(`${l.family}/${l.table}/${target}`, owner);
    return owner;
  }

  private resolve(l: Pick<TraceRuleLine, 'family' | 'table' | 'chain' | 'rule' | 'what'>): RuleOwner | null {
    const rule = l.rule ?? '';
    const m = COMMENT_ID.exec(rule);
    if (m) {
      const ours = this.sandboxes.find((s) => s.id === m[3]);
      if (!ours) return null;
      const portmap = m[1] !== undefined || l.chain.startsWith('CNI-HOSTPORT-') || l.chain.startsWith('CNI-DN-');
      return { plugin: portmap ? 'portmap' : 'bridge', network: m[2]!, sandboxId: ours.id };
    }
    const inherited = this.chainOwners.get(`${l.family}/${l.table}/${l.chain}`);
    if (inherited) return inherited;
    // portmap's and firewall's jumps from the kernel's chains into their own are theirs too
    const target = /-j (\S+)/.exec(rule)?.[1] ?? '';
    if (l.chain.startsWith('CNI-HOSTPORT-') || target.startsWith('CNI-HOSTPORT-') || /"CNI portfwd/.test(rule))
      return { plugin: 'portmap' };
    if (target === 'CNI-FORWARD' || target === 'CNI-ADMIN') return { plugin: 'firewall' };
    if (l.chain === 'CNI-FORWARD' || l.chain === 'CNI-ADMIN') {
      const ip = /-[ds] ([0-9a-f.:]+)\/(?:32|128)\b/.exec(rule)?.[1];
      const s = ip ? this.sandboxes.find((x) => x.ips.includes(ip)) : undefined;
      return s ? { plugin: 'firewall', ...(s.network ? { network: s.network } : {}), sandboxId: s.id } : { plugin: 'firewall' };
    }
    return null;
  }
}
