/**
 * The probe's OS touch points: an agent per network namespace (the host's, or one the engine created) that can list
 * TCP listeners, open short-lived responders and make TCP connects; and the order of portmap's DNAT jumps.
 * Real: electron/engine/netns/linux-probe-net.ts. Fake (a simulated network): testkit/fakes/fake-probe-net.ts.
 */
import type { KernelLink, KernelRoute } from '../kernel/types';

export type ConnectOutcome =
  | { kind: 'connected'; rttMs: number; banner?: string }
  | { kind: 'refused' }
  | { kind: 'timeout' }
  /** connect() failed at once with a routing error (its errno code): the kernel had no usable route for the flow */
  | { kind: 'unreachable'; error: string }
  | { kind: 'error'; error: string };

/** errno codes connect() fails with at once when the route decision, not the peer, stopped the flow */
export const ROUTE_ERRORS: Record<string, string> = {
  ENETUNREACH: 'no route to the network',
  EHOSTUNREACH: 'host unreachable (an unreachable route or an ICMP host-unreachable)',
  EINVAL: 'the route is a blackhole',
  EACCES: 'the route is prohibit',
};

/** what one DNS query from an agent got back */
export type DnsOutcome =
  | {
      kind: 'answer';
      transport: 'udp' | 'tcp';
      rcode: string;
      answers: string[];
      rttMs: number;
      /** the UDP answer was truncated (TC): this answer came over TCP */
      truncated?: boolean;
      /** UDP got an ICMP port unreachable: this answer came over TCP */
      udpRefused?: boolean;
    }
  /** nothing listens on port 53 (UDP port unreachable and TCP RST) */
  | { kind: 'refused'; udpRefused?: boolean; tcpTimeout?: boolean }
  | { kind: 'timeout'; truncated?: boolean }
  | { kind: 'unreachable'; error: string }
  | { kind: 'error'; error: string };

/** one ICMP echo with DF set: answered, lost (no answer, no error), refused as too big (with the MTU said), or not sent */
export type PingOutcome =
  | { kind: 'ok' }
  | { kind: 'lost' }
  /** local: the sender's own route/link said so (EMSGSIZE); else an ICMP "fragmentation needed" from a hop */
  | { kind: 'tooBig'; mtu: number; local?: boolean }
  | { kind: 'error'; error: string };

export interface ProbeAgent {
  /** the agent's process id (undefined for in-memory fakes), so tests can check it is gone after the probe */
  readonly pid?: number;
  /** TCP ports that have a socket in LISTEN state in the agent's netns */
  listeners(): Promise<number[]>;
  /** listens on address:port (port 0 = any free one; no address = every address, both families) and answers each connection with `banner` */
  respond(port: number, banner: string, address?: string): Promise<number>;
  /**
   * @param opts.resetIfBanner close with a reset instead of a FIN when what answered began with this text: one of the
   *   probe's own responders, so the measurement leaves no TIME-WAIT entry in the pod's netns (or the host's) for the
   *   next minute; a listener of the pod's own always gets a normal close
   * @param opts.localPort connect from this source port (a traced connect: the trace matches that one flow)
   */
  connect(
    host: string,
    port: number,
    timeoutMs: number,
    bannerMs: number,
    opts?: { resetIfBanner?: string; localPort?: number },
  ): Promise<ConnectOutcome>;
  /** one DNS query to server:port from this netns (UDP, then TCP when truncated or refused); absent in old fakes */
  dns?(
    server: string,
    port: number,
    name: string,
    qtype: 'A' | 'AAAA' | 'NS',
    timeoutMs: number,
    opts?: { localPort?: number },
  ): Promise<DnsOutcome>;
  /** one ICMP echo of `size` bytes (the IP packet) to host with DF set (the path MTU audit); absent: no audit */
  ping?(host: string, size: number, timeoutMs: number): Promise<PingOutcome>;
  /** closes every responder and ends the agent (by its pid); idempotent */
  close(): Promise<void>;
}

export interface ProbeNet {
  /** an agent in the netns pinned at netnsPath, or in the host's netns when undefined */
  open(netnsPath: string | undefined, signal?: AbortSignal): Promise<ProbeAgent>;
  /** the rules of CNI-HOSTPORT-DNAT in the nat table of each family, `-A …` lines in chain order (empty when absent) */
  hostportDnatRules(signal?: AbortSignal): Promise<{ v4: string[]; v6: string[] }>;
  /** the host's own addresses (to refuse probing a host_ip that would send packets off the host) */
  hostAddresses(): string[];
  /**
   * What the kernel says about the pod's interface `ifName` (its kind; for a macvlan/ipvlan child, its parent link in
   * the host's netns and whether the host has a child of its own there). Absent where the kernel cannot be asked: the
   * isolation rules then go by the plugin chain alone.
   */
  interfaceLink?(netnsPath: string, ifName: string, signal?: AbortSignal): Promise<InterfaceLink | undefined>;
  /** the links (with their MTU) and routes of a netns (undefined: the host's), for the path MTU audit's narrow link */
  netnsLinks?(
    netnsPath: string | undefined,
    signal?: AbortSignal,
    opts?: { routes?: boolean },
  ): Promise<{ links: KernelLink[]; routes: KernelRoute[] }>;
  /** ends what it keeps between probes (host-side agents kept for the next probe); absent: it keeps nothing */
  dispose?(): Promise<void>;
}

/** The kernel's facts about one pod interface that decide which paths its plugin's design forbids. */
export interface InterfaceLink {
  /** `linkinfo.info_kind`: veth, macvlan, ipvlan, … (undefined for a link without one, e.g. a moved physical NIC) */
  kind?: string;
  /** the lower link a macvlan/ipvlan child hangs off, in the host's netns, with its own addresses */
  parent?: { name: string; addresses: string[] };
  /** a child of the same kind on that parent in the host's netns (the host's own leg into the network), by name */
  hostLeg?: string;
}

/** what a connect that failed at once with a routing error says */
export function unreachableNote(code: string): string {
  return `connect failed at once with ${code}: ${ROUTE_ERRORS[code] ?? 'a routing error'} (no packet was sent)`;
}
