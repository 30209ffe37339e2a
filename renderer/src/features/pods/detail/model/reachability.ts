/**
 * How a probe report is shown: a verdict's label and colour, and the paths grouped by the network they cross. Green
 * only for a path measured reachable while the pod is ready; `isolated` (expected by the plugin's design) has a colour
 * of its own, never green and never red.
 */
import {
  dnsPaths,
  networkDetail,
  pathsByNetwork,
  type ProbePath,
  type ProbeReport,
  type ProbeVerdict,
} from '../../../../../../shared/domain/probe';
import type { Tone } from '../../../../lib/ui/StatusPill';

export function hhmmss(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString(undefined, { hour12: false });
}

export const VERDICT_LABEL: Record<ProbeVerdict, string> = {
  reachable: 'reachable',
  refused: 'refused',
  timeout: 'timed out',
  unreachable: 'unreachable',
  shadowed: 'shadowed',
  isolated: 'isolated by design',
  notApplicable: 'not applicable',
};

export function verdictTone(p: ProbePath, podReady: boolean): Tone {
  if (!p.measured || !podReady) return 'muted';
  // connected, but full-size packets vanish on it: not green
  if (p.mtu?.blackHole) return 'bad';
  if (p.verdict === 'reachable') return 'ok';
  if (p.verdict === 'shadowed') return 'warn';
  if (p.verdict === 'isolated') return 'info';
  if (p.verdict === 'notApplicable') return 'muted';
  return 'bad';
}

/** not measured: either nothing applies (derived from the pod's state and configuration) or the measurement could not be made */
export const unmeasuredLabel = (p: ProbePath) => (p.verdict === 'notApplicable' ? 'derived from configuration' : 'not measured');

export const KIND_LABEL: Record<ProbePath['kind'], string> = {
  hostPort: 'host port',
  podPort: 'pod port',
  gateway: 'gateway',
  // the network path between two pods (a port the probe picks), beside the paths to the ports a pod declares
  peer: 'peer · network',
  peerPort: 'peer · port',
  dns: 'DNS',
};

export type GroupCount = ProbeVerdict | 'blackHole';

export const COUNT_LABEL: Record<GroupCount, string> = { ...VERDICT_LABEL, blackHole: 'MTU black hole' };

/** what a path counts as in its group's summary: the same failure its pill shows (connects · MTU black hole is red, not reachable) */
function countOf(p: ProbePath): GroupCount {
  return p.verdict === 'reachable' && p.mtu?.blackHole ? 'blackHole' : p.verdict;
}

function countPaths(rows: ReadonlyArray<{ path: ProbePath }>): PathGroup['counts'] {
  const counts: PathGroup['counts'] = {};
  for (const { path } of rows) {
    const k = countOf(path);
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return counts;
}

export interface PathGroup {
  /** "containerd-net · eth0", or undefined for paths the probe did not tie to a network (a stopped pod's) */
  title?: string;
  /** the chain and link facts, e.g. "bridge → portmap · veth" */
  detail?: string;
  network?: string;
  interface?: string;
  /** ready peers on this network beyond the ones measured */
  peersNote?: string;
  rows: Array<{ path: ProbePath; index: number }>;
  /** counts per verdict, for the group's summary; a path that connects but loses full-size packets counts as `blackHole`, never as reachable */
  counts: Partial<Record<GroupCount, number>>;
  /** the DNS group: the pod's resolv.conf is shown beside its paths */
  dns?: { resolvConf?: string; source: string };
}

export function pathGroups(report: ProbeReport): PathGroup[] {
  const groups = networkGroups(report);
  const rows = dnsPaths(report);
  if (report.dns || rows.length > 0) {
    const counts = countPaths(rows);
    const d = report.dns;
    groups.push({
      title: 'DNS',
      detail: d
        ? `${d.servers.length ? `nameservers from ${d.source === 'dns_config' ? "the pod's dns_config" : 'its resolv.conf'}` : 'no nameserver'} · asks ${d.qtype} ${d.name}`
        : undefined,
      rows,
      counts,
      dns: { source: d?.source ?? 'resolv.conf', ...(d?.resolvConf !== undefined ? { resolvConf: d.resolvConf } : {}) },
    });
  }
  return groups;
}

function networkGroups(report: ProbeReport): PathGroup[] {
  return pathsByNetwork(report).map((g) => {
    const n = g.info;
    const counts = countPaths(g.paths);
    return {
      title: g.network === undefined ? undefined : `${g.network} · ${g.interface ?? '?'}`,
      detail: n ? networkDetail(n).join(' · ') : undefined,
      network: g.network,
      interface: g.interface,
      peersNote: n?.peers && n.peers.measured < n.peers.ready ? `peers: newest ${n.peers.measured} of ${n.peers.ready}` : undefined,
      rows: g.paths,
      counts,
    };
  });
}
