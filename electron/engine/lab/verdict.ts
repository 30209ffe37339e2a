/**
 * From three snapshots (before ADD, after ADD, after DEL) to what the run created and what it left. The host is
 * shared with other pods and runtimes that change it at the same time, so only facts that name this run are counted:
 * its container id, the chains and ifb the plugins derive from (network, id), its host veths, its conflist's bridges
 * and its pod addresses. Bridges, portmap's shared chains and host-local's cursor file stay on purpose.
 */
import { createHash } from 'node:crypto';
import type { LabKept, LabKernelItem, LabPluginTrace } from '../../../shared/domain/lab';
import { KERNEL_KINDS, type KernelSnapshot } from './kernel';

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

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** host veths, MACs and IPs every ADD stdout reported (a failed list still tells what its first plugins made) */
export function namesFromTraces(plugins: LabPluginTrace[], base: Omit<RunNames, 'hostVeths' | 'macs' | 'podIps' | 'derived'>): RunNames {
  const hostVeths = new Set<string>();
  const macs = new Set<string>();
  const podIps = new Set<string>();
  for (const p of plugins) {
    if (p.verb !== 'ADD' || !p.stdout.trim()) continue;
    let r: unknown;
    try {
      r = JSON.parse(p.stdout);
    } catch {
      continue;
    }
    if (!isObj(r)) continue;
    for (const i of Array.isArray(r.interfaces) ? r.interfaces : []) {
      if (!isObj(i)) continue;
      if (typeof i.mac === 'string' && i.mac) macs.add(i.mac.toLowerCase());
      if (typeof i.name === 'string' && !i.sandbox && !base.bridges.includes(i.name)) hostVeths.add(i.name);
    }
    for (const ip of Array.isArray(r.ips) ? r.ips : [])
      if (isObj(ip) && typeof ip.address === 'string') podIps.add(ip.address.split('/')[0]!);
    // 0.3.x results still say ip4/ip6 in 0.2.0 form sometimes
    for (const k of ['ip4', 'ip6'])
      if (isObj(r[k]) && typeof (r[k] as Obj).ip === 'string') podIps.add(((r[k] as Obj).ip as string).split('/')[0]!);
  }
  return {
    ...base,
    hostVeths: [...hostVeths],
    macs: [...macs],
    podIps: [...podIps],
    derived: derivedNames(base.network, base.containerId),
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** the characters an address continues with: 10.0.0.2 must not match 10.0.0.23, but may be followed by ":80" */
const wordChars = (addr: string) => (addr.includes(':') ? '0-9a-fA-F:' : '0-9.');
/** an address (or MAC) as a whole token */
const addrPattern = (addr: string, flags = '') => new RegExp(`(^|[^${wordChars(addr)}])${escape(addr)}(?![${wordChars(addr)}])`, flags);
const ipToken = (ip: string) => addrPattern(ip);

function firstWord(line: string): string {
  return line.split(' ')[0] ?? '';
}

/** true when the fact names this run */
export function relates(kind: string, line: string, n: RunNames, newLinks: Set<string>): boolean {
  const devices = new Set([...n.hostVeths, ...n.derived.ifb, ...n.bridges]);
  switch (kind) {
    case 'netns-link':
    case 'netns-address':
    case 'netns-route':
      return true; // the netns is the run's own
    case 'link': {
      const name = firstWord(line);
      if (devices.has(name)) return true;
      const master = / master (\S+)/.exec(line)?.[1];
      return master !== undefined && n.bridges.includes(master) && newLinks.has(name);
    }
    case 'host-address':
      return devices.has(firstWord(line)) || newLinks.has(firstWord(line));
    case 'qdisc': {
      const dev = / ?dev (\S+)/.exec(line)?.[1] ?? '';
      return devices.has(dev) || newLinks.has(dev);
    }
    case 'iptables':
    case 'ip6tables': {
      if (line.includes(n.containerId) || line.includes(n.derived.masqChain) || line.includes(n.derived.dnatChain)) return true;
      return n.podIps.some((ip) => ipToken(ip).test(line));
    }
    case 'ipam':
      return line.includes(n.containerId) || /\/last_reserved_ip\.\d+ /.test(line);
    case 'cache':
      return line.includes(n.containerId);
    default:
      return false;
  }
}

function keptWhy(kind: string, line: string, n: RunNames): string | undefined {
  if (
    (kind === 'link' || kind === 'host-address' || kind === 'qdisc') &&
    n.bridges.some((b) => firstWord(line) === b || line.startsWith(`dev ${b} `))
  ) {
    return 'the bridge plugin keeps its bridge (with the gateway address and MTU it set) for other attachments';
  }
  if (kind === 'ipam' && /\/last_reserved_ip\.\d+ /.test(line))
    return "host-local's allocation cursor: it remembers the last address it handed out";
  return undefined;
}

export interface Verdict {
  created: LabKernelItem[];
  left: LabKernelItem[];
  kept: LabKept[];
}

export function verdict(before: KernelSnapshot, afterAdd: KernelSnapshot, afterDel: KernelSnapshot, n: RunNames): Verdict {
  // links that appeared and are the run's (its devices, or enslaved to its bridge): other pods' new links on the
  // same host must not make their addresses and qdiscs look like this run's
  const ourNewLinks = (s: KernelSnapshot) => {
    const had = new Set(before.link.map(firstWord));
    const fresh = new Set(s.link.map(firstWord).filter((name) => !had.has(name)));
    return new Set(s.link.filter((line) => fresh.has(firstWord(line)) && relates('link', line, n, fresh)).map(firstWord));
  };
  const diff = (s: KernelSnapshot): LabKernelItem[] => {
    const links = ourNewLinks(s);
    const out: LabKernelItem[] = [];
    for (const kind of KERNEL_KINDS) {
      const had = new Set(before[kind]);
      for (const line of s[kind]) if (!had.has(line) && relates(kind, line, n, links)) out.push({ kind, what: line });
    }
    return out;
  };
  const created = diff(afterAdd);
  const kept: LabKept[] = [];
  const left: LabKernelItem[] = [];
  for (const item of diff(afterDel)) {
    const why = keptWhy(item.kind, item.what, n);
    if (why) kept.push({ ...item, why });
    else left.push(item);
  }
  return { created, left, kept };
}

/** run-specific names → placeholders, so two runs (or a run and a pod) compare on what the config changed */
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

export function normalize(text: string, tokens: Record<string, string>): string {
  let out = text;
  for (const actual of Object.keys(tokens).sort((a, b) => b.length - a.length)) {
    if (!actual) continue;
    const re = /^[0-9a-fA-F:.]+$/.test(actual) && /[.:]/.test(actual) ? addrPattern(actual, 'gi') : new RegExp(escape(actual), 'gi');
    out = out.replace(re, (m, pre?: string) => `${typeof pre === 'string' ? pre : ''}${tokens[actual]}`);
  }
  return out;
}
