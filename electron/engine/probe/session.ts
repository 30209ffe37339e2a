/**
 * What one probe holds while it runs: an agent per network namespace it measures from or into, the listeners each pod
 * already had, and the responders it opened. Everything here is ended by close(), which the probe calls in a finally,
 * so no agent, responder or socket outlives a probe (failed or not).
 */
import type { ProbeAgent, ProbeNet } from '../netns/probe-net';

export const PROBE_BANNER = 'PODSCOPE-PROBE';

/** "host" for the host's agent, else a sandbox id */
export type AgentKey = 'host' | string;

export class ProbeSession {
  private readonly agents = new Map<AgentKey, ProbeAgent>();
  private readonly listenersOf = new Map<AgentKey, Set<number>>();
  /** `<sandbox>/<port>` → whether the port had a listener of the pod's own (no responder was opened then) */
  private readonly responders = new Map<string, boolean>();

  constructor(
    private readonly net: ProbeNet,
    /** random per probe: an answer carrying another probe's nonce is not this probe's */
    readonly nonce: string,
    private readonly signal?: AbortSignal,
  ) {}

  /** what every answer of this probe's own responders begins with */
  get answerPrefix(): string {
    return `${PROBE_BANNER} ${this.nonce}`;
  }

  /** the text a responder of `sandboxId` (or "host") answers with */
  banner(sandboxId: AgentKey): string {
    return `${this.answerPrefix} ${sandboxId}\n`;
  }

  /** the agent in the host's netns (netnsPath undefined) or a sandbox's; started once per key */
  async open(key: AgentKey, netnsPath: string | undefined): Promise<ProbeAgent> {
    let a = this.agents.get(key);
    if (!a) {
      a = await this.net.open(netnsPath, this.signal);
      this.agents.set(key, a);
      if (netnsPath !== undefined) this.listenersOf.set(key, new Set(await a.listeners()));
    }
    return a;
  }

  /** an agent already opened */
  agent(key: AgentKey): ProbeAgent {
    const a = this.agents.get(key);
    if (!a) throw new Error(`probe: no agent for ${key}`);
    return a;
  }

  /**
   * A responder on `port` in sandbox `sandboxId` unless something listens there already (a pod's own listener is
   * connected to as it is, never taken over). Returns whether a listener existed.
   */
  async ensurePort(sandboxId: string, netnsPath: string, port: number): Promise<boolean> {
    const key = `${sandboxId}/${port}`;
    const known = this.responders.get(key);
    if (known !== undefined) return known;
    const agent = await this.open(sandboxId, netnsPath);
    const existing = this.listenersOf.get(sandboxId)!.has(port);
    if (!existing) await agent.respond(port, this.banner(sandboxId));
    this.responders.set(key, existing);
    return existing;
  }

  /** ends every agent (and with it every responder and socket); never throws */
  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close().catch(() => undefined)));
  }
}
