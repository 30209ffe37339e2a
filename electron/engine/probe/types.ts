/**
 * The probe's OS touch points: an agent per network namespace (the host's, or one the engine created) that can list
 * TCP listeners, open short-lived responders and make TCP connects; and the order of portmap's DNAT jumps.
 * Real: electron/engine/probe/linux-probe-net.ts. Fake (a simulated network): testkit/fakes/fake-probe-net.ts.
 */
export type ConnectOutcome =
  { kind: 'connected'; rttMs: number; banner?: string } | { kind: 'refused' } | { kind: 'timeout' } | { kind: 'error'; error: string };

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
   */
  connect(host: string, port: number, timeoutMs: number, bannerMs: number, opts?: { resetIfBanner?: string }): Promise<ConnectOutcome>;
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
}
