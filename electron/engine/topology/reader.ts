/**
 * The topology touch point: `ip -j -d link show` + `ip -j addr show` on the host and inside a netns (through
 * nsenter, so any netns path works) and `bridge -j -d link show` on the host. Raw JSON out; build.ts interprets it.
 */
import { describeCommand, type ProcessRunner } from '../os/exec';

export interface IpLinkJson {
  ifindex: number;
  ifname: string;
  flags?: string[];
  mtu?: number;
  operstate?: string;
  address?: string;
  master?: string;
  /** the peer's ifindex (veth), in the other namespace when link_netnsid is set */
  link_index?: number;
  link?: string;
  link_netnsid?: number;
  linkinfo?: { info_kind?: string; info_slave_kind?: string };
  addr_info?: Array<{ family: string; local: string; prefixlen: number; scope?: string }>;
}

export interface BridgeLinkJson {
  ifindex: number;
  ifname: string;
  master?: string;
  state?: string;
  hairpin?: boolean;
}

export interface RawTopology {
  host: IpLinkJson[];
  bridgePorts: BridgeLinkJson[];
  /** netns path → its links with addresses */
  pods: Record<string, IpLinkJson[]>;
  errors: string[];
}

export interface TopologyReader {
  read(netnsPaths: string[], signal?: AbortSignal): Promise<RawTopology>;
}

const TIMEOUT_MS = 10_000;

export class LinuxTopologyReader implements TopologyReader {
  constructor(private readonly runner: ProcessRunner) {}

  async read(netnsPaths: string[], signal?: AbortSignal): Promise<RawTopology> {
    const errors: string[] = [];
    const json = async <T>(file: string, args: string[]): Promise<T[]> => {
      const r = await this.runner
        .run({ file, args, timeoutMs: TIMEOUT_MS, signal })
        .catch((e: unknown) => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
      if (r.exitCode !== 0) {
        errors.push(`${describeCommand(file, args)}: ${r.stderr.trim() || `exit ${String(r.exitCode)}`}`);
        return [];
      }
      try {
        return (r.stdout.trim() ? JSON.parse(r.stdout) : []) as T[];
      } catch (e) {
        errors.push(`${describeCommand(file, args)}: unparseable output: ${(e as Error).message}`);
        return [];
      }
    };
    // `ip -d addr` carries link details (kind, master, link_index) and addresses in one read
    const [host, bridgePorts, ...pods] = await Promise.all([
      json<IpLinkJson>('ip', ['-d', '-j', 'addr', 'show']),
      json<BridgeLinkJson>('bridge', ['-d', '-j', 'link', 'show']),
      ...netnsPaths.map((p) => json<IpLinkJson>('nsenter', [`--net=${p}`, 'ip', '-d', '-j', 'addr', 'show'])),
    ]);
    return {
      host: host as IpLinkJson[],
      bridgePorts: bridgePorts as BridgeLinkJson[],
      pods: Object.fromEntries(netnsPaths.map((p, i) => [p, pods[i] as IpLinkJson[]])),
      errors,
    };
  }
}
