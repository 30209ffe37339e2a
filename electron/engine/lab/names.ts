/**
 * The names a run (or a live pod's ADD) is known by on the host — container id, netns, host veths, MACs, pod
 * addresses, the chains and ifb the plugins derive from (network, container id) — and the placeholders they become,
 * so two runs, or a run and a pod, compare on what their configs changed. Both sides of a diff get their names the
 * same way, from their ADD traces alone (the network name and the bridges from the plugins' stdin), so a pod's ADD
 * and a run of the same conflist normalise to the same text.
 */
import { createHash } from 'node:crypto';
import type { LabPluginTrace } from '../../../shared/domain/lab';
import { DEFAULT_BRIDGE } from './conflist-facts';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

const sha = (prefix: string, text: string, length: number) =>
  `${prefix}${createHash('sha512').update(text).digest('hex')}`.slice(0, length);

export interface RunNames {
  containerId: string;
  network: string;
  netns: string;
  bridges: string[];
  hostVeths: string[];
  macs: string[];
  podIps: string[];
  /** chains and devices the plugins name after (network, container id) */
  derived: { masqChain: string; dnatChain: string; ifb: string[] };
}

/** the plugins' utils.FormatChainName and bandwidth's ifb name (newer plugins hash network + id, older ones id only) */
export function derivedNames(network: string, containerId: string): RunNames['derived'] {
  return {
    masqChain: sha('CNI-', network + containerId, 28),
    dnatChain: sha('CNI-DN-', network + containerId, 28),
    ifb: [sha('bwp', network + containerId, 15), sha('bwp', containerId, 15)],
  };
}

function parsed(text: string): Obj | undefined {
  if (!text.trim()) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** host veths, MACs and IPs every ADD stdout reported (a failed list still tells what its first plugins made) */
export function namesFromTraces(plugins: LabPluginTrace[], base: Omit<RunNames, 'hostVeths' | 'macs' | 'podIps' | 'derived'>): RunNames {
  const derived = derivedNames(base.network, base.containerId);
  const hostVeths = new Set<string>();
  const macs = new Set<string>();
  const podIps = new Set<string>();
  for (const p of plugins) {
    const r = p.verb === 'ADD' ? parsed(p.stdout) : undefined;
    if (!r) continue;
    for (const i of Array.isArray(r.interfaces) ? r.interfaces : []) {
      if (!isObj(i)) continue;
      if (typeof i.mac === 'string' && i.mac) macs.add(i.mac.toLowerCase());
      // the bridge and bandwidth's ifb are named by the config and (network, id): they have their own placeholders
      if (typeof i.name === 'string' && !i.sandbox && !base.bridges.includes(i.name) && !derived.ifb.includes(i.name))
        hostVeths.add(i.name);
    }
    for (const ip of Array.isArray(r.ips) ? r.ips : [])
      if (isObj(ip) && typeof ip.address === 'string') podIps.add(ip.address.split('/')[0]!);
    // 0.3.x results still say ip4/ip6 in 0.2.0 form sometimes
    for (const k of ['ip4', 'ip6'])
      if (isObj(r[k]) && typeof (r[k] as Obj).ip === 'string') podIps.add(((r[k] as Obj).ip as string).split('/')[0]!);
  }
  return { ...base, hostVeths: [...hostVeths], macs: [...macs], podIps: [...podIps], derived };
}

/** The network name (libcni injects it into every stdin) and the bridges the bridge plugin was told to use. */
export function listNamesFromTraces(plugins: LabPluginTrace[]): { network: string; bridges: string[] } {
  let network = '';
  const bridges = new Set<string>();
  for (const p of plugins) {
    if (p.verb !== 'ADD') continue;
    const conf = parsed(p.stdin);
    if (!conf) continue;
    if (!network && typeof conf.name === 'string') network = conf.name;
    if (p.type === 'bridge') bridges.add(typeof conf.bridge === 'string' && conf.bridge ? conf.bridge : DEFAULT_BRIDGE);
  }
  return { network, bridges: [...bridges] };
}

/** run-specific names → placeholders */
export function tokensOf(n: RunNames): Record<string, string> {
  const t: Record<string, string> = {};
  t[n.containerId] = '<container-id>';
  t[n.netns] = '<netns>';
  t[n.derived.masqChain] = '<masq-chain>';
  t[n.derived.dnatChain] = '<dnat-chain>';
  n.derived.ifb.forEach((x) => (t[x] = '<ifb>'));
  n.hostVeths.forEach((x, i) => (t[x] = `<host-veth-${i}>`));
  n.macs.forEach((x, i) => (t[x] = `<mac-${i}>`));
  n.podIps.forEach((x, i) => (t[x] = `<pod-ip-${i}>`));
  return t;
}

/** The placeholders of one side of a diff (a run or a pod's ADD), from its ADD traces and its ids only. */
export function placeholderTokens(plugins: LabPluginTrace[], ids: { containerId: string; netns: string }): Record<string, string> {
  return tokensOf(namesFromTraces(plugins, { ...ids, ...listNamesFromTraces(plugins) }));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** the characters an address continues with: 10.0.0.2 must not match 10.0.0.23, but may be followed by ":80" */
const wordChars = (addr: string) => (addr.includes(':') ? '0-9a-fA-F:' : '0-9.');
/** an address (or MAC) as a whole token */
export const addrPattern = (addr: string, flags = '') =>
  new RegExp(`(^|[^${wordChars(addr)}])${escape(addr)}(?![${wordChars(addr)}])`, flags);

export function normalize(text: string, tokens: Record<string, string>): string {
  let out = text;
  for (const actual of Object.keys(tokens).sort((a, b) => b.length - a.length)) {
    if (!actual) continue;
    const re = /^[0-9a-fA-F:.]+$/.test(actual) && /[.:]/.test(actual) ? addrPattern(actual, 'gi') : new RegExp(escape(actual), 'gi');
    out = out.replace(re, (m, pre?: string) => `${typeof pre === 'string' ? pre : ''}${tokens[actual]}`);
  }
  return out;
}
