/**
 * From three snapshots (before ADD, after ADD, after DEL) to what the run created and what it left. The host is
 * shared with other pods and runtimes that change it at the same time, so only facts that name this run are counted:
 * its container id, the chains and ifb the plugins derive from (network, id), its host veths, its conflist's bridges
 * and its pod addresses. Bridges, portmap's shared chains and host-local's cursor file stay on purpose.
 */
import type { LabKept, LabKernelItem } from '../../../shared/domain/lab';
import { KERNEL_KINDS, type KernelSnapshot } from './kernel';
import { addrPattern, type RunNames } from './names';

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
    case 'netns-rule':
      return true; // the netns is the run's own
    case 'host-route':
    case 'host-rule': {
      // a route through one of the run's devices (ptp's host-side /32) or to or from its addresses
      const devs = [...line.matchAll(/ (?:dev|iif|oif) (\S+)/g)].map((m) => m[1]!);
      if (devs.some((d) => devices.has(d) || newLinks.has(d))) return true;
      return n.podIps.some((ip) => ipToken(ip).test(line));
    }
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

/** true for a fact about one of these bridges: the device itself, its addresses, its qdiscs */
export function onBridge(kind: string, line: string, bridges: string[]): boolean {
  // the bridge's own routes: the kernel adds them for its gateway address
  if (kind === 'host-route') return bridges.some((b) => / dev (\S+)/.exec(line)?.[1] === b);
  return (
    (kind === 'link' || kind === 'host-address' || kind === 'qdisc') &&
    bridges.some((b) => firstWord(line) === b || line.startsWith(`dev ${b} `))
  );
}

function keptWhy(kind: string, line: string, n: RunNames): string | undefined {
  if (onBridge(kind, line, n.bridges)) {
    return 'the bridge plugin keeps its bridge (with the gateway address, its routes and the MTU it set) for other attachments';
  }
  if (kind === 'ipam' && /\/last_reserved_ip\.\d+ /.test(line))
    return "host-local's allocation cursor: it remembers the last address it handed out";
  return undefined;
}

export interface Verdict {
  created: LabKernelItem[];
  left: LabKernelItem[];
  kept: LabKept[];
  /** the run's bridges (with their addresses and qdiscs) as they were before ADD: used by the run, not created by it */
  existedBefore: LabKernelItem[];
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
  const existedBefore = KERNEL_KINDS.flatMap((kind) =>
    before[kind].filter((line) => onBridge(kind, line, n.bridges)).map((what) => ({ kind, what })),
  );
  return { created, left, kept, existedBefore };
}
