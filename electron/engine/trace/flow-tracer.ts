/**
 * Follows single TCP connections through the kernel while a probe makes them. For each flow (a source port the
 * engine chose before connecting, so nothing else matches) it: starts `xtables-monitor --trace` in every netns the
 * flow crosses, adds TRACE rules for those source ports to the raw table there (v4 or v6), and afterwards reads the
 * route decisions (`ip route get`) and the conntrack entry. finish() always removes every rule it added (and a raw
 * table it created) and ends every monitor by pid, whatever happened to the connects; a start-up sweep removes the
 * rules of an engine that was killed mid-trace (their comment names its pid).
 */
import type { ProcessRunner } from '../os/exec';
import { routeGet, type RouteDecision, type RouteGetQuery } from '../kernel/route-get';
import {
  hasTool,
  linesOfFlow,
  NetfilterTraceMonitor,
  NetfilterTraceRules,
  orphanTraceMonitors,
  parseTraceOutput,
  podscopeTraceRules,
  traceComment,
  traceCommentPid,
  type TraceLine,
} from '../kernel/netfilter-trace';
import { parseConntrack, type ConntrackEntry } from './conntrack';
import { DropRecorder, sweepDropInstances, type KernelDrop } from './drop-reasons';
import { PathCapture, podHops, writePcapng, type CapturedPacket, type Hop, type HopCapture } from './capture';

export interface TraceNetns {
  /** "host" or a sandbox id */
  key: string;
  /** the pinned netns path (undefined: the host's) */
  path?: string;
  /** "the host", "the pod's netns", "peer web's netns" */
  label: string;
}

export interface FlowSpec {
  sport: number;
  family: 4 | 6;
  dst: string;
  dport: number;
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

export interface SweptTraceRule {
  netns: string;
  family: 4 | 6;
  rule: string;
  error?: string;
}

export interface FlowTracer {
  /** a source port no other trace of this process is using; release() it once the trace finished */
  allocatePort(avoid?: Set<number>): number;
  releasePort(port: number): void;
  begin(flows: FlowSpec[], signal?: AbortSignal): Promise<ActiveTrace>;
  /**
   * start-up: removes TRACE rules of Podscope engines that are no longer running from these netns (undefined: the
   * host), and ends the trace monitors such an engine left running
   */
  sweep(netnsPaths: Array<string | undefined>): Promise<{ rules: SweptTraceRule[]; monitors: Array<{ pid: number; error?: string }> }>;
}

/** how long after the last connect the monitors keep reading (the kernel delivers trace events asynchronously) */
const SETTLE_MS = 200;
/** source ports outside the usual ephemeral range (32768–60999), so an automatic bind does not take one first */
const PORT_MIN = 20000;
const PORT_MAX = 32767;

const inUse = new Set<number>();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** which trace tools this host has, and a line in `missing` for each part of the trace a lacking one costs */
function traceTools(): { canTrace: boolean; hasNft: boolean; hasConntrack: boolean; missing: string[] } {
  const missing: string[] = [];
  const canTrace = hasTool('xtables-monitor') && hasTool('iptables-restore') && hasTool('stdbuf');
  if (!canTrace) missing.push('netfilter: xtables-monitor, iptables-restore or stdbuf is not installed (no rule-by-rule steps)');
  const hasNft = hasTool('nft');
  if (canTrace && !hasNft) missing.push('nft: not installed (a raw table created for tracing is left, empty)');
  const hasConntrack = hasTool('conntrack');
  if (!hasConntrack) missing.push('conntrack: not installed (no conntrack step)');
  return { canTrace, hasNft, hasConntrack, missing };
}

/** the source ports of one netns and family: one monitor and one set of TRACE rules serve them all */
interface TracedPorts {
  netns: TraceNetns;
  family: 4 | 6;
  ports: number[];
}

/** every netns the flows cross (by key), and the source ports to trace there per family ("key/family") */
function portsByNetns(flows: FlowSpec[]): { netnsByKey: Map<string, TraceNetns>; ports: Map<string, TracedPorts> } {
  const netnsByKey = new Map<string, TraceNetns>();
  const ports = new Map<string, TracedPorts>();
  for (const f of flows)
    for (const n of f.netns) {
      netnsByKey.set(n.key, n);
      const k = `${n.key}/${f.family}`;
      const e = ports.get(k) ?? { netns: n, family: f.family, ports: [] };
      e.ports.push(f.sport);
      ports.set(k, e);
    }
  return { netnsByKey, ports };
}

/**
 * seen-at: each flow's hops in path order (a pod that sends: eth0, its host veth, the bridge; a pod that receives:
 * the bridge, its host veth, eth0), a hop listed once per flow
 */
async function seenAtHops(runner: ProcessRunner, flows: FlowSpec[], netnsByKey: Map<string, TraceNetns>): Promise<Hop[][]> {
  const podHopsOf = new Map<string, Awaited<ReturnType<typeof podHops>>>();
  for (const n of netnsByKey.values())
    if (n.path) podHopsOf.set(n.key, await podHops(runner, { key: n.key, path: n.path, label: n.label }));
  return flows.map((f) => {
    const hops: Hop[] = [];
    f.netns.forEach((n, i) => {
      const h = podHopsOf.get(n.key);
      if (!h) return;
      const order = i === 0 ? [h.eth0, h.veth, h.bridge] : [h.bridge, h.veth, h.eth0];
      for (const x of order) if (x && !hops.some((y) => y.netns === x.netns && y.interface === x.interface)) hops.push(x);
    });
    return hops;
  });
}

/** a flow's netfilter lines per netns key, from the parsed monitor output of each "key/family" */
function flowLines(f: FlowSpec, parsed: Map<string, TraceLine[]>): Map<string, FlowLine[]> {
  const lines = new Map<string, FlowLine[]>();
  for (const n of f.netns)
    lines.set(
      n.key,
      linesOfFlow(
        (parsed.get(`${n.key}/${f.family}`) ?? []).filter((l) => l.family === f.family),
        f.sport,
      ),
    );
  return lines;
}

/** the packets of the flow (source port `sport`) each of its hops captured, split into the way out and the way back */
function seenOnHops(hops: Hop[], captured: HopCapture[], sport: number): NonNullable<FlowRecord['seen']> {
  return hops.map((hop) => {
    const c = captured.find((x) => x.hop.netns === hop.netns && x.hop.interface === hop.interface);
    const out: CapturedPacket[] = [];
    const back: CapturedPacket[] = [];
    for (const p of c?.packets ?? []) {
      if (p.sport === sport) out.push(p);
      else if (p.dport === sport) back.push(p);
    }
    return { hop, out, back, ...(c?.error ? { error: c.error } : {}) };
  });
}

/** every hop's capture as one pcapng, an interface per hop named "<netns>/<interface>" */
function pcapngOf(captured: HopCapture[]): NonNullable<ActiveTrace['capture']> {
  return {
    pcapng: writePcapng(captured),
    interfaces: captured.map((c) => `${c.hop.netns === 'host' ? 'host' : c.hop.netns.slice(0, 12)}/${c.hop.interface}`),
    packets: captured.reduce((n, c) => n + c.packets.length, 0),
  };
}

/**
 * What one begin() started and must put back: the captures, the drop recorder, a monitor per netns and family, and
 * the TRACE rules (with any raw table or chains the trace created). cleanup() undoes all of it, whatever part of the
 * start-up got through, and reads what the monitors, captures and recorder saw.
 */
class TraceRun {
  capture: PathCapture | undefined;
  /** after cleanup(): what each hop captured */
  captured: HopCapture[] | undefined;
  dropRecorder: DropRecorder | undefined;
  /** after cleanup(): what the kernel freed while the trace ran */
  drops: KernelDrop[] | undefined;
  private readonly monitors = new Map<string, NetfilterTraceMonitor>();
  private readonly added: Array<TracedPorts & { createdTable: boolean; createdChains: string[] }> = [];

  constructor(
    private readonly rules: NetfilterTraceRules,
    private readonly comment: string,
    private readonly netnsByKey: Map<string, TraceNetns>,
  ) {}

  async startMonitors(ports: Map<string, TracedPorts>): Promise<void> {
    const started = await Promise.allSettled(
      [...ports.values()].map(async (e) => {
        this.monitors.set(`${e.netns.key}/${e.family}`, await NetfilterTraceMonitor.start(e.netns.path, e.family));
      }),
    );
    const notStarted = started.find((r) => r.status === 'rejected');
    if (notStarted) throw notStarted.reason;
  }

  /**
   * each netns and family on its own: the adds run side by side (each is a process start, most of the cost); all of
   * them settle before a failure cleans up, so no add lands after its removal
   */
  async addRules(ports: Map<string, TracedPorts>, hasNft: boolean, signal: AbortSignal | undefined): Promise<void> {
    const settled = await Promise.allSettled(
      [...ports.values()].map(async (e) => {
        if (signal?.aborted) throw new Error('canceled');
        // the raw table as it was: a trace creates it when absent (with its own comment, so a sweep after a kill
        // knows it), and counts one another trace of this engine created as its own too (whichever ends last
        // deletes it); in a table that was there, the chains iptables adds are deleted again
        const table = hasNft ? await this.rules.rawTable(e.netns.path, e.family) : { exists: true, chains: ['PREROUTING', 'OUTPUT'] };
        const createdTable = !table.exists || table.comment === this.comment;
        const createdChains = createdTable ? [] : ['PREROUTING', 'OUTPUT'].filter((c) => !table.chains.includes(c));
        // recorded before adding, so a half-applied add is still removed
        this.added.push({ ...e, createdTable, createdChains });
        if (!table.exists) await this.rules.createRawTable(e.netns.path, e.family, this.comment);
        await this.rules.apply(e.netns.path, e.family, '-I', e.ports, this.comment);
      }),
    );
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async cleanup(): Promise<{ problems: string[]; texts: Map<string, string>; monitorProblems: Map<string, string> }> {
    const problems: string[] = [];
    const cap = this.capture;
    this.capture = undefined;
    if (cap)
      this.captured = await cap.stop().catch((e: Error) => {
        problems.push(`seen-at: could not read the captures: ${e.message}`);
        return undefined;
      });
    const recorder = this.dropRecorder;
    this.dropRecorder = undefined;
    if (recorder)
      this.drops = await recorder.stop().catch((e: Error) => {
        problems.push(`drop reasons: could not read or remove the tracefs instance: ${e.message}`);
        return undefined;
      });
    const { texts, monitorProblems } = await this.stopMonitors();
    await Promise.all(
      this.added.map(async (a) => {
        try {
          await this.rules.apply(a.netns.path, a.family, '-D', a.ports, this.comment);
          if (a.createdTable) await this.rules.deleteEmptyRawTable(a.netns.path, a.family);
          else for (const c of a.createdChains) await this.rules.deleteRawChainIfEmpty(a.netns.path, a.family, c);
        } catch (e) {
          problems.push(`could not remove the TRACE rules in ${a.netns.label}: ${(e as Error).message}`);
        }
      }),
    );
    return { problems, texts, monitorProblems };
  }

  /** each monitor's output by "key/family", and a line for each monitor that restarted or complained */
  private async stopMonitors(): Promise<{ texts: Map<string, string>; monitorProblems: Map<string, string> }> {
    const texts = new Map<string, string>();
    const monitorProblems = new Map<string, string>();
    await Promise.all(
      [...this.monitors].map(async ([key, m]) => {
        texts.set(key, await m.stop());
        const { stderr, restarts } = m.problems();
        const [nk, fam] = key.split('/');
        const where = `${this.netnsByKey.get(nk!)?.label ?? nk} (IPv${fam})`;
        const msg = stderr.split('\n')[0] ?? '';
        if (restarts > 0)
          monitorProblems.set(
            key,
            `netfilter: xtables-monitor in ${where} ended ${restarts} time(s) mid-trace and was started again; the events in between are lost (${msg || 'no message'})`,
          );
        else if (stderr) monitorProblems.set(key, `netfilter: xtables-monitor in ${where}: ${msg}`);
      }),
    );
    return { texts, monitorProblems };
  }
}

export class LinuxFlowTracer implements FlowTracer {
  private readonly rules: NetfilterTraceRules;

  constructor(private readonly runner: ProcessRunner) {
    this.rules = new NetfilterTraceRules(runner);
  }

  allocatePort(avoid: Set<number> = new Set()): number {
    for (let i = 0; i < 1000; i++) {
      const p = PORT_MIN + Math.floor(Math.random() * (PORT_MAX - PORT_MIN));
      if (!inUse.has(p) && !avoid.has(p)) {
        inUse.add(p);
        return p;
      }
    }
    throw new Error('no free source port for a traced connect');
  }

  releasePort(port: number): void {
    inUse.delete(port);
  }

  async begin(flows: FlowSpec[], signal?: AbortSignal): Promise<ActiveTrace> {
    const { canTrace, hasNft, hasConntrack, missing } = traceTools();
    const { netnsByKey, ports } = portsByNetns(flows);
    const run = new TraceRun(this.rules, traceComment(process.pid), netnsByKey);
    try {
      run.dropRecorder = await DropRecorder.start(this.runner);
    } catch (e) {
      missing.push(`drop reasons: ${(e as Error).message} (no drop step)`);
    }
    // seen-at: the hops of each flow, in path order, captured on each hop once for every flow crossing it
    let flowHops: Hop[][] = [];
    if (!hasTool('tcpdump')) missing.push('seen-at: tcpdump is not installed (no seen steps, no pcapng)');
    else {
      try {
        flowHops = await seenAtHops(this.runner, flows, netnsByKey);
        const unique = new Map(flowHops.flat().map((h) => [`${h.netns}/${h.interface}`, h]));
        run.capture = await PathCapture.start(
          [...unique.values()],
          flows.map((f) => f.sport),
        );
      } catch (e) {
        missing.push(`seen-at: could not start the captures: ${(e as Error).message}`);
      }
    }

    if (canTrace) {
      try {
        await run.startMonitors(ports);
        await run.addRules(ports, hasNft, signal);
      } catch (e) {
        await run.cleanup();
        throw e;
      }
    }

    const active: ActiveTrace = {
      missing,
      finish: async () => {
        await new Promise((r) => setTimeout(r, canTrace ? SETTLE_MS : 0));
        const { problems, texts, monitorProblems } = await run.cleanup();
        missing.push(...problems);
        const { captured, drops } = run;
        if (captured) active.capture = pcapngOf(captured);
        const parsed = new Map([...texts].map(([k, t]) => [k, parseTraceOutput(t)]));
        return Promise.all(
          flows.map(async (f, i): Promise<FlowRecord> => {
            const rec: FlowRecord = {
              lines: flowLines(f, parsed),
              routes: await Promise.all(
                f.routes.map(async (r) => ({ ...r, decision: await routeGet(this.runner, r.netns.path, r.query) })),
              ),
              missing: f.netns.flatMap((n) => monitorProblems.get(`${n.key}/${f.family}`) ?? []),
            };
            if (drops) rec.drops = drops.filter((d) => d.family === f.family);
            if (captured) rec.seen = seenOnHops(flowHops[i] ?? [], captured, f.sport);
            if (hasConntrack)
              rec.conntrack = await Promise.all(
                f.netns.map(async (n) => ({ netns: n, entries: await this.conntrack(n.path, f.family, f.sport) })),
              );
            return rec;
          }),
        );
      },
    };
    return active;
  }

  private async conntrack(netnsPath: string | undefined, family: 4 | 6, sport: number): Promise<ConntrackEntry[]> {
    const args = ['-L', '-p', 'tcp', '--orig-port-src', String(sport), '-f', family === 4 ? 'ipv4' : 'ipv6'];
    const r = await this.runner
      .run(
        netnsPath === undefined
          ? { file: 'conntrack', args, timeoutMs: 5000 }
          : { file: 'nsenter', args: [`--net=${netnsPath}`, 'conntrack', ...args], timeoutMs: 5000 },
      )
      .catch(() => undefined);
    return r?.exitCode === 0 ? parseConntrack(r.stdout) : [];
  }

  async sweep(
    netnsPaths: Array<string | undefined>,
  ): Promise<{ rules: SweptTraceRule[]; monitors: Array<{ pid: number; error?: string }> }> {
    const monitors = orphanTraceMonitors(process.pid, pidAlive).map(({ pid }) => {
      try {
        process.kill(pid, 'SIGKILL');
        return { pid };
      } catch (e) {
        return { pid, error: (e as Error).message };
      }
    });
    if (!hasTool('iptables-restore')) return { rules: [], monitors };
    const hasNft = hasTool('nft');
    const gone = (pid: number | undefined) => pid !== undefined && pid !== process.pid && !pidAlive(pid);
    const out: SweptTraceRule[] = [];
    for (const path of netnsPaths)
      for (const family of [4, 6] as const) {
        const stale = podscopeTraceRules(await this.rules.rawRules(path, family)).filter((r) => gone(r.pid));
        for (const s of stale) {
          const item: SweptTraceRule = { netns: path ?? 'host', family, rule: s.rule };
          try {
            await this.rules.deleteRule(path, family, s.rule);
          } catch (e) {
            item.error = (e as Error).message;
          }
          out.push(item);
        }
        // the raw table such a trace created (its comment names the pid), once nothing else is in it
        const table = hasNft ? await this.rules.rawTable(path, family) : undefined;
        if (table?.exists && gone(traceCommentPid(table.comment))) {
          const item: SweptTraceRule = {
            netns: path ?? 'host',
            family,
            rule: `table ${family === 4 ? 'ip' : 'ip6'} raw (${table.comment})`,
          };
          try {
            if (!(await this.rules.deleteEmptyRawTable(path, family))) item.error = 'it holds rules of others: left';
          } catch (e) {
            item.error = (e as Error).message;
          }
          out.push(item);
        }
      }
    for (const i of await sweepDropInstances(pidAlive))
      out.push({ netns: 'host', family: 4, rule: `tracefs instance ${i.path}`, ...(i.error ? { error: i.error } : {}) });
    return { rules: out, monitors };
  }
}
