/**
 * Real probe agents: `node -e AGENT_SCRIPT` in the host netns, or `nsenter --net=<path> node -e …` inside a sandbox's
 * netns (nsenter execs, so the pid we hold is the agent's own). Each agent is a child in its own process group; close()
 * ends stdin, waits briefly and then kills it by pid, so nothing a probe started in a pod outlives it.
 *
 * The agent in this process's own netns is the exception: every probe on this node needs one, and a Node start is
 * ~0.1–0.2 CPU s here (a third of the agents a probe starts). After a probe it closes its responders and is kept, per
 * process, for the next probe for KEEP_HOST_AGENT_MS, then ended. Nothing else is kept: an agent in a pod's netns would
 * show among what runs in the pod and keep the netns alive after its runtime deleted it, and one in another node's
 * netns (a kind node's, where a probe placed on that node has its host side) would outlive a read-only measurement of
 * another runtime's node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { PodscopeError } from '../../../shared/domain/errors';
import { LinuxKernelReader } from '../kernel/linux-reader';
import { tablesOf } from '../kernel/netfilter';
import type { KernelLink, KernelReader, KernelRoute } from '../kernel/types';
import type { ProcessRunner } from '../os/exec';
import { nodeScriptEnv } from '../os/node-script-env';
import { AGENT_SCRIPT } from './probe-agent-script';
import type { ConnectOutcome, DnsOutcome, InterfaceLink, PingOutcome, ProbeAgent, ProbeNet } from './probe-net';

const START_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
const EXIT_GRACE_MS = 1000;
/** how long the host's agent waits for the next probe: probes come in bursts (a matrix, a page's checks, a test) */
export const KEEP_HOST_AGENT_MS = 3000;
/** host agents kept: probes run side by side (the app's pages, the CRI's pollers) */
const MAX_KEPT = 2;

/** The agents in this process's netns kept between probes, each with the timer that ends it. */
const kept: Array<{ agent: ChildAgent; timer: NodeJS.Timeout }> = [];

/** A kept agent, still alive, for the next probe's host side. */
function takeKept(): ChildAgent | undefined {
  for (let entry = kept.pop(); entry; entry = kept.pop()) {
    clearTimeout(entry.timer);
    if (entry.agent.alive) {
      entry.agent.inUse();
      return entry.agent;
    }
  }
  return undefined;
}

/** Keeps a host agent whose probe is done (its responders closed), or ends it when enough are kept. */
function keep(agent: ChildAgent): void {
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
  // a kept agent never keeps this process alive (a CLI verb exits when its work is done; stdin's end ends the agent)
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

export class LinuxProbeNet implements ProbeNet {
  constructor(
    runner: ProcessRunner,
    private readonly nodePath = process.execPath,
    private readonly kernel: KernelReader = new LinuxKernelReader(runner),
    private readonly place?: ProbeHostPlace,
  ) {}

  async open(pinned: string | undefined, signal?: AbortSignal): Promise<ProbeAgent> {
    const netnsPath = pinned ?? this.place?.netnsPath;
    const ownNetns = netnsPath === undefined;
    const reused = ownNetns ? takeKept() : undefined;
    if (reused) return new AgentLease(reused);
    const [file, args] =
      netnsPath === undefined
        ? [this.nodePath, ['-e', AGENT_SCRIPT]]
        : ['nsenter', [`--net=${netnsPath}`, '--', this.nodePath, '-e', AGENT_SCRIPT]];
    const child = spawn(file, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      // the agent reads one variable of its own (tests shorten its lifetime)
      env: nodeScriptEnv(['PODSCOPE_PROBE_LIFETIME_MS']),
    });
    const agent = new ChildAgent(child, netnsPath ?? 'host');
    try {
      await agent.ready(signal);
    } catch (e) {
      await agent.close();
      throw e;
    }
    return ownNetns ? new AgentLease(agent) : agent;
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

class ChildAgent implements ProbeAgent {
  private nextId = 1;
  private buffer = '';
  private stderr = '';
  private readonly pending = new Map<number, (reply: Record<string, unknown>) => void>();
  private exited = false;
  private readonly exitPromise: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    private readonly where: string,
  ) {
    this.exitPromise = new Promise((resolve) => {
      const gone = () => {
        if (this.exited) return;
        this.exited = true;
        for (const [, done] of this.pending)
          done({ ok: false, error: `probe agent in ${where} exited${this.stderr ? `: ${this.stderr.trim().slice(-500)}` : ''}` });
        this.pending.clear();
        resolve();
      };
      child.once('exit', gone);
      // spawn failure (nsenter or node missing): no 'exit' follows
      child.once('error', (e) => {
        this.stderr += e.message;
        gone();
      });
    });
    child.stdin!.on('error', () => undefined);
    child.stderr!.on('data', (b: Buffer) => {
      this.stderr = (this.stderr + b.toString()).slice(-4000);
    });
    child.stdout!.on('data', (b: Buffer) => {
      this.buffer += b.toString('utf8');
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as Record<string, unknown>;
          const done = this.pending.get(msg.id as number);
          this.pending.delete(msg.id as number);
          done?.(msg);
        } catch {
          // not ours: ignore
        }
      }
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited && this.child.exitCode === null && this.child.signalCode === null;
  }

  async ready(signal?: AbortSignal): Promise<void> {
    const reply = await this.wait(0, START_TIMEOUT_MS, signal);
    if (!reply.ok) throw new PodscopeError('RuntimeError', `cannot start the probe agent in ${this.where}: ${String(reply.error)}`);
  }

  /** Closes every responder; false when the agent could not (it is then ended, not kept). */
  async reset(): Promise<boolean> {
    if (!this.alive || this.pending.size > 0) return false;
    return (await this.request({ op: 'reset' })).ok === true;
  }

  /** A kept agent's child and pipes do not hold this process's event loop; one in use does. */
  idle(): void {
    this.child.unref();
    for (const pipe of this.pipes()) pipe.unref();
  }

  inUse(): void {
    this.child.ref();
    for (const pipe of this.pipes()) pipe.ref();
  }

  /** stdin, stdout and stderr: spawned with 'pipe', each is a net.Socket (typed only as a stream) */
  private pipes(): Socket[] {
    return [this.child.stdin, this.child.stdout, this.child.stderr] as Socket[];
  }

  private wait(id: number, timeoutMs: number, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      if (this.exited) return resolve({ ok: false, error: `probe agent in ${this.where} has exited` });
      const timer = setTimeout(() => {
        this.pending.delete(id);
        signal?.removeEventListener('abort', onAbort);
        resolve({ ok: false, error: 'probe agent did not answer in time' });
      }, timeoutMs);
      const onAbort = () => {
        this.pending.delete(id);
        clearTimeout(timer);
        resolve({ ok: false, error: 'canceled' });
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, (r) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      });
    });
  }

  private async request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const answer = this.wait(id, REQUEST_TIMEOUT_MS);
    if (!this.exited) this.child.stdin!.write(`${JSON.stringify({ ...body, id })}\n`);
    return answer;
  }

  async listeners(): Promise<number[]> {
    const r = await this.request({ op: 'listeners' });
    if (!r.ok) throw new PodscopeError('RuntimeError', `listing TCP listeners in ${this.where}: ${String(r.error)}`);
    return r.ports as number[];
  }

  async respond(port: number, banner: string, address?: string): Promise<number> {
    const r = await this.request({ op: 'respond', port, banner, address });
    if (!r.ok)
      throw new PodscopeError('RuntimeError', `cannot open a responder on ${address ?? '*'}:${port} in ${this.where}: ${String(r.error)}`);
    return r.port as number;
  }

  async connect(
    host: string,
    port: number,
    timeoutMs: number,
    bannerMs: number,
    opts: { resetIfBanner?: string; localPort?: number } = {},
  ): Promise<ConnectOutcome> {
    const r = await this.request({
      op: 'connect',
      host,
      port,
      timeoutMs,
      bannerMs,
      resetIfBanner: opts.resetIfBanner,
      localPort: opts.localPort,
    });
    if (!r.ok) return { kind: 'error', error: String(r.error) };
    return r.outcome as ConnectOutcome;
  }

  async dns(
    server: string,
    port: number,
    name: string,
    qtype: 'A' | 'AAAA' | 'NS',
    timeoutMs: number,
    opts: { localPort?: number } = {},
  ): Promise<DnsOutcome> {
    const r = await this.request({ op: 'dns', server, port, name, qtype, timeoutMs, localPort: opts.localPort });
    if (!r.ok) return { kind: 'error', error: String(r.error) };
    return r.outcome as DnsOutcome;
  }

  async ping(host: string, size: number, timeoutMs: number): Promise<PingOutcome> {
    const r = await this.request({ op: 'ping', host, size, timeoutMs });
    if (!r.ok) return { kind: 'error', error: String(r.error) };
    return r.outcome as PingOutcome;
  }

  /** Ends the agent: stdin's end, then SIGKILL to its group after a grace period. */
  async close(): Promise<void> {
    if (this.exited || this.child.pid === undefined) return;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin!.end();
    const timer = setTimeout(() => {
      try {
        process.kill(-this.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, EXIT_GRACE_MS);
    await this.exitPromise;
    clearTimeout(timer);
  }
}

/**
 * The host's agent handed to one probe: close() returns it to the kept agents once its responders are closed (or
 * ends it when they could not be). A lease is closed once; the agent it held may already serve the next probe.
 */
class AgentLease implements ProbeAgent {
  private closed = false;

  constructor(private readonly agent: ChildAgent) {}

  get pid(): number | undefined {
    return this.agent.pid;
  }

  private live(): ChildAgent {
    if (this.closed) throw new PodscopeError('RuntimeError', 'probe agent used after its probe closed it');
    return this.agent;
  }

  async listeners(): Promise<number[]> {
    return this.live().listeners();
  }

  async respond(port: number, banner: string, address?: string): Promise<number> {
    return this.live().respond(port, banner, address);
  }

  async connect(...args: Parameters<ChildAgent['connect']>): Promise<ConnectOutcome> {
    return this.live().connect(...args);
  }

  async dns(...args: Parameters<ChildAgent['dns']>): Promise<DnsOutcome> {
    return this.live().dns(...args);
  }

  async ping(...args: Parameters<ChildAgent['ping']>): Promise<PingOutcome> {
    return this.live().ping(...args);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (await this.agent.reset()) keep(this.agent);
    else await this.agent.close();
  }
}
