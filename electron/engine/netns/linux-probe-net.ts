/**
 * Real probe agents (probe-agents.ts): worker threads of this process, in a sandbox's (or a node's) netns entered with
 * setns(2) through koffi, or in this process's own; processes (`node -e`, through `nsenter --net=<path>` for another
 * netns) where a thread cannot enter one: koffi does not load here (another arch, a build without it), setns is
 * refused, or PODSCOPE_PROBE_AGENTS=processes asks for them. That choice is said once per process and reason (log).
 * Each agent ends with its probe (close() asks, then kills or terminates), so nothing a probe started in a pod
 * outlives it.
 *
 * The agent in this process's own netns is the exception: every probe on this node needs one, and starting one costs
 * (a worker ~0.07 CPU s, a process ~0.15–0.2). After a probe it closes its responders and is kept, per process, for
 * the next probe for KEEP_HOST_AGENT_MS, then ended. Nothing else is kept: an agent in a pod's netns would show among
 * what runs in the pod and keep the netns alive after its runtime deleted it, and one in another node's netns (a kind
 * node's, where a probe placed on that node has its host side) would outlive a read-only measurement of another
 * runtime's node.
 */
import { networkInterfaces } from 'node:os';
import { PodscopeError } from '../../../shared/domain/errors';
import { LinuxKernelReader } from '../kernel/linux-reader';
import { tablesOf } from '../kernel/netfilter';
import type { KernelLink, KernelReader, KernelRoute } from '../kernel/types';
import type { ProcessRunner } from '../os/exec';
import { type AgentConnection, ChildAgent, koffiNativeFile, ThreadAgent, ThreadEnterRefused } from './probe-agents';
import type { ConnectOutcome, DnsOutcome, InterfaceLink, PingOutcome, ProbeAgent, ProbeNet } from './probe-net';

/** how long the host's agent waits for the next probe: probes come in bursts (a matrix, a page's checks, a test) */
export const KEEP_HOST_AGENT_MS = 3000;
/** host agents kept: probes run side by side (the app's pages, the CRI's pollers) */
const MAX_KEPT = 2;

/** The agents in this process's netns kept between probes, each with the timer that ends it. */
const kept: Array<{ agent: AgentConnection; timer: NodeJS.Timeout }> = [];

/** A kept agent of this kind (a probe net asking for processes never gets a thread), still alive, for the next probe's host side. */
function takeKept(kind: AgentConnection['kind']): AgentConnection | undefined {
  for (let at = kept.length - 1; at >= 0; at--) {
    const entry = kept[at]!;
    if (entry.agent.kind !== kind) continue;
    kept.splice(at, 1);
    clearTimeout(entry.timer);
    if (entry.agent.alive) {
      entry.agent.inUse();
      return entry.agent;
    }
  }
  return undefined;
}

/** Keeps a host agent whose probe is done (its responders closed), or ends it when enough are kept. */
function keep(agent: AgentConnection): void {
  if (kept.length >= MAX_KEPT) {
    void agent.close();
    return;
  }
  agent.idle();
  const entry = {
    agent,
    timer: setTimeout(() => {
      const at = kept.indexOf(entry);
      if (at >= 0) kept.splice(at, 1);
      void agent.close();
    }, KEEP_HOST_AGENT_MS),
  };
  // a kept agent never keeps this process alive (a CLI verb exits when its work is done; its exit ends a thread, and
  // stdin's end a process)
  entry.timer.unref();
  kept.push(entry);
}

/** Ends every kept host agent now (an engine's shutdown: nothing it started stays behind it). */
export async function endKeptProbeAgents(): Promise<void> {
  const all = kept.splice(0);
  for (const { timer } of all) clearTimeout(timer);
  await Promise.all(all.map(({ agent }) => agent.close()));
}

/**
 * Where "the host" of a probe is when the pods belong to another node on this machine (a kind node): the node's
 * network namespace, where its bridge, its pods' host veths, its routes and its netfilter rules are, and its own
 * addresses. Every host-side agent and read then happens there, never in this process's netns.
 */
export interface ProbeHostPlace {
  /** the node's netns as this process reaches it (/proc/<runtime pid>/ns/net) */
  netnsPath: string;
  /** its addresses (no prefix): host_ip and gateway checks compare with these */
  addresses: string[];
}

/** How agents run: threads where they can (the default), or always processes. */
export interface ProbeAgentOptions {
  /**
   * koffi's native file, for a thread to enter another netns with setns (default: koffiNativeFile(); null: none, so
   * agents in another netns are processes)
   */
  ffi?: string | null;
  /** 'processes': every agent a process, as before threads (PODSCOPE_PROBE_AGENTS=processes) */
  transport?: 'threads' | 'processes';
  /** where the fall back to process agents is said (once per process and reason); default: stderr */
  log?: (line: string) => void;
}

/** why a thread cannot enter a netns with this FFI file ('' for none), once seen: every such agent is a process */
const refused = new Map<string, string>();
/** the reasons already said (each once per process, whichever engine or measurer met it) */
const said = new Set<string>();

export class LinuxProbeNet implements ProbeNet {
  private readonly givenFfi: string | null | undefined;
  private foundFfi: { file: string | undefined } | undefined;
  private readonly transport: 'threads' | 'processes';
  private readonly log: (line: string) => void;

  constructor(
    runner: ProcessRunner,
    private readonly nodePath = process.execPath,
    private readonly kernel: KernelReader = new LinuxKernelReader(runner),
    private readonly place?: ProbeHostPlace,
    agents: ProbeAgentOptions = {},
  ) {
    this.givenFfi = agents.ffi;
    this.transport = agents.transport ?? (process.env.PODSCOPE_PROBE_AGENTS === 'processes' ? 'processes' : 'threads');
    this.log = agents.log ?? ((line) => process.stderr.write(`podscope: ${line}\n`));
  }

  /** looked for on the first agent, not when an engine opens: a verb that probes nothing never touches koffi */
  private get ffi(): string | undefined {
    this.foundFfi ??= { file: this.givenFfi === null ? undefined : (this.givenFfi ?? koffiNativeFile()) };
    return this.foundFfi.file;
  }

  /**
   * How an agent in a netns other than this process's runs now: a thread, or a process with the reason (koffi not
   * found or not loaded, setns refused with EPERM, or asked for).
   */
  agentTransport(): { kind: 'thread' } | { kind: 'process'; reason: string } {
    if (this.transport === 'processes') return { kind: 'process', reason: 'PODSCOPE_PROBE_AGENTS=processes' };
    if (this.ffi === undefined)
      return { kind: 'process', reason: `koffi's native file for ${process.platform}_${process.arch} was not found` };
    const why = refused.get(this.ffi);
    return why === undefined ? { kind: 'thread' } : { kind: 'process', reason: why };
  }

  async open(pinned: string | undefined, signal?: AbortSignal): Promise<ProbeAgent> {
    const netnsPath = pinned ?? this.place?.netnsPath;
    const ownNetns = netnsPath === undefined;
    const reused = ownNetns ? takeKept(this.transport === 'threads' ? 'thread' : 'process') : undefined;
    if (reused) return new AgentLease(reused);
    const agent = await this.start(netnsPath, signal);
    return ownNetns ? new AgentLease(agent) : agent;
  }

  /** A thread where one can get into the netns (this process's own needs no setns), else a process. */
  private async start(netnsPath: string | undefined, signal?: AbortSignal): Promise<AgentConnection> {
    const how = this.agentTransport();
    if (this.transport === 'threads' && (netnsPath === undefined || how.kind === 'thread')) {
      const thread = new ThreadAgent(netnsPath, this.ffi);
      try {
        await thread.ready(signal);
        return thread;
      } catch (e) {
        await thread.close();
        if (!(e instanceof ThreadEnterRefused)) throw e;
        if (e.always) refused.set(this.ffi ?? '', e.reason);
        this.say(`probe agents in other network namespaces run as processes (nsenter, node): ${e.reason}`);
      }
    } else if (netnsPath !== undefined && how.kind === 'process' && this.transport === 'threads')
      this.say(`probe agents in other network namespaces run as processes (nsenter, node): ${how.reason}`);
    const child = new ChildAgent(this.nodePath, netnsPath);
    try {
      await child.ready(signal);
    } catch (e) {
      await child.close();
      throw e;
    }
    return child;
  }

  private say(line: string): void {
    if (said.has(line)) return;
    said.add(line);
    this.log(line);
  }

  async hostportDnatRules(signal?: AbortSignal): Promise<{ v4: string[]; v6: string[] }> {
    const { netfilter } = await this.kernel.read(this.place?.netnsPath, { netfilter: { tables: ['nat'] } }, { signal });
    // no chain (no pod ever mapped a host port, or a family's read failed): nothing conflicts there
    const chain = (family: 4 | 6) =>
      tablesOf(netfilter, family)
        .flatMap((t) => t.rules)
        .filter((r) => r.chain === 'CNI-HOSTPORT-DNAT')
        .map((r) => r.spec);
    return { v4: chain(4), v6: chain(6) };
  }

  async interfaceLink(netnsPath: string, ifName: string, signal?: AbortSignal): Promise<InterfaceLink | undefined> {
    const { links } = await this.kernel.read(netnsPath, { links: true }, { signal });
    const link = links.find((l) => l.name === ifName);
    if (!link) return undefined;
    const out: InterfaceLink = link.kind ? { kind: link.kind } : {};
    // a child moved into the pod names its lower link by ifindex in the netns it came from (link_netnsid): the host's
    if (link.kind !== 'macvlan' && link.kind !== 'ipvlan') return out;
    if (link.peerIfindex === undefined || link.peerNetnsId === undefined) return out;
    const host = (await this.kernel.read(this.place?.netnsPath, { links: true }, { signal })).links;
    const parent = host.find((l) => l.ifindex === link.peerIfindex);
    if (!parent) return out;
    out.parent = { name: parent.name, addresses: parent.addresses.map((a) => a.address) };
    // a child in the same netns as its lower link names it by name (`link`), not by index
    const leg = host.find((l) => l.kind === link.kind && l.peerName === parent.name && l.peerNetnsId === undefined);
    if (leg) out.hostLeg = leg.name;
    return out;
  }

  async netnsLinks(
    netnsPath: string | undefined,
    signal?: AbortSignal,
    opts: { routes?: boolean } = {},
  ): Promise<{ links: KernelLink[]; routes: KernelRoute[] }> {
    const { links, routes } = await this.kernel.read(
      netnsPath ?? this.place?.netnsPath,
      { links: true, routes: opts.routes !== false },
      { signal },
    );
    return { links, routes };
  }

  dispose(): Promise<void> {
    return endKeptProbeAgents();
  }

  hostAddresses(): string[] {
    if (this.place) return [...this.place.addresses];
    return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.replace(/%.*$/, '')));
  }
}

/**
 * The host's agent handed to one probe: close() returns it to the kept agents once its responders are closed (or
 * ends it when they could not be). A lease is closed once; the agent it held may already serve the next probe.
 */
class AgentLease implements ProbeAgent {
  private closed = false;

  constructor(private readonly agent: AgentConnection) {}

  get pid(): number | undefined {
    return this.agent.pid;
  }

  private live(): AgentConnection {
    if (this.closed) throw new PodscopeError('RuntimeError', 'probe agent used after its probe closed it');
    return this.agent;
  }

  async listeners(): Promise<number[]> {
    return this.live().listeners();
  }

  async respond(port: number, banner: string, address?: string): Promise<number> {
    return this.live().respond(port, banner, address);
  }

  async connect(...args: Parameters<AgentConnection['connect']>): Promise<ConnectOutcome> {
    return this.live().connect(...args);
  }

  async dns(...args: Parameters<AgentConnection['dns']>): Promise<DnsOutcome> {
    return this.live().dns(...args);
  }

  async ping(...args: Parameters<AgentConnection['ping']>): Promise<PingOutcome> {
    return this.live().ping(...args);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (await this.agent.reset()) keep(this.agent);
    else await this.agent.close();
  }
}
