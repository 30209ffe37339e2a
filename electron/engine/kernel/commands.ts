/**
 * The commands that read kernel state, for the host's namespace or (through `nsenter --net=<path>`, so any netns
 * file works, pinned by us or by another runtime) for a pod's. Exported apart from the reader so a test double of the
 * OS boundary and the synchronous leak checker run exactly these.
 */
import { sysctlPath } from './parse';
import type { IpFamily } from './types';

export interface KernelCommand {
  file: string;
  args: string[];
}

function at(netns: string | undefined, file: string, args: string[]): KernelCommand {
  return netns === undefined ? { file, args } : { file: 'nsenter', args: [`--net=${netns}`, file, ...args] };
}

export const kernelCommands = {
  /** `-d addr` carries link details (kind, master, peer) and addresses in one read */
  links: (netns?: string) => at(netns, 'ip', ['-d', '-j', 'addr', 'show']),
  routes: (family: IpFamily, netns?: string) => at(netns, 'ip', ['-j', `-${family}`, 'route', 'show', 'table', 'all']),
  rules: (family: IpFamily, netns?: string) => at(netns, 'ip', ['-j', `-${family}`, 'rule', 'show']),
  qdiscs: (netns?: string, dev?: string) => at(netns, 'tc', ['-j', 'qdisc', 'show', ...(dev === undefined ? [] : ['dev', dev])]),
  ingressFilters: (dev: string, netns?: string) => at(netns, 'tc', ['-j', 'filter', 'show', 'dev', dev, 'ingress']),
  bridgePorts: (netns?: string) => at(netns, 'bridge', ['-d', '-j', 'link', 'show']),
  /** one save lists every table of a family; `table` narrows it to one */
  netfilter: (family: IpFamily, netns?: string, table?: string) =>
    at(netns, family === 4 ? 'iptables-save' : 'ip6tables-save', table === undefined ? [] : ['-t', table]),
  /**
   * /proc/sys/net answers for the netns of the process that opens it, so a pod's values are read from inside its
   * netns. `grep -H ^` prints `path:value` per line of every readable file; `-s` keeps a missing one quiet.
   */
  sysctls: (names: string[], netns?: string) => at(netns, 'grep', ['-H', '-s', '^', ...names.map(sysctlPath)]),
};
