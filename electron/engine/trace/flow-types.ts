/** What a flow trace is asked to follow and what it hands back: the shapes the tracer, its run and the step builder share. */
import type { RouteDecision, RouteGetQuery } from '../kernel/route-get';
import type { TraceLine } from '../kernel/netfilter-trace';
import type { ConntrackEntry } from './conntrack';
import type { KernelDrop } from './drop-reasons';
import type { CapturedPacket, Hop } from './capture';

export interface TraceNetns {
  /** "host" or a sandbox id */
  key: string;
  /** the pinned netns path (undefined: the host's) */
  path?: string;
  /** "the host", "the pod's netns", "peer web's netns" */
  label: string;
  /** the node it belongs to, when that is not this host (a kind node on this machine): every step there names it */
  node?: string;
  /** a pod's: the netns its eth0's veth peer and bridge are in (its node's; undefined: the host's) */
  parent?: { key: string; path?: string; label: string };
}

export interface FlowSpec {
  sport: number;
  family: 4 | 6;
  dst: string;
  dport: number;
  /** the flow's protocol (default tcp; udp for a DNS query) */
  proto?: 'tcp' | 'udp';
  /** every netns the flow crosses, the sender's first */
  netns: TraceNetns[];
  /** the route decisions to read afterwards, in path order */
  routes: Array<{ netns: TraceNetns; query: RouteGetQuery; purpose: string; reply?: boolean }>;
}

export type FlowLine = TraceLine & { reply: boolean };

export interface FlowRecord {
  /** netfilter lines of this flow, per netns key, in the order the monitor printed them */
  lines: Map<string, FlowLine[]>;
  routes: Array<{ netns: TraceNetns; purpose: string; reply?: boolean; query: RouteGetQuery; decision: RouteDecision }>;
  /** what this flow's trace lacked beyond ActiveTrace.missing (e.g. a monitor of its family that restarted) */
  missing: string[];
  /** seen-at: the flow's hops in path order and the packets of the flow each captured, each way (undefined: no capture) */
  seen?: Array<{ hop: Hop; out: CapturedPacket[]; back: CapturedPacket[]; error?: string }>;
  /** IP packets the kernel freed while the trace ran, of this flow's family (undefined: tracefs unavailable) */
  drops?: KernelDrop[];
  /**
   * seen-at: every hop's packets of this flow only (its source port, either way) as one pcapng, for the path's own
   * download; ActiveTrace.capture holds every flow's
   */
  capture?: { pcapng: Buffer; interfaces: string[]; packets: number };
  /** undefined when conntrack is not installed */
  conntrack?: Array<{ netns: TraceNetns; entries: ConntrackEntry[] }>;
}

export interface ActiveTrace {
  /** kernel tools or features this trace could not use, and so what it lacks */
  readonly missing: string[];
  /** after finish(): every hop's capture as one pcapng (an interface per hop), bounded in size */
  capture?: { pcapng: Buffer; interfaces: string[]; packets: number };
  /** stops tracing, puts every rule back, and returns what each flow (same order as begin's) went through */
  finish(): Promise<FlowRecord[]>;
}
