/**
 * One begin() of the flow tracer, in parts: which tools the host has, the source ports per netns and family, the
 * seen-at hops of each flow, and the TraceRun that starts the monitors and TRACE rules and puts every one of them back;
 * then the pieces of each flow's record read from what was captured.
 */
import {
  hasTool,
  linesOfFlow,
  NetfilterTraceMonitor,
  type NetfilterTraceRules,
  traceCommentPid,
  type TraceLine,
} from '../kernel/netfilter-trace';
import type { DropRecorder, KernelDrop } from './drop-reasons';
import type { KernelReader } from '../kernel/types';
import { podHops, writePcapng, type CapturedPacket, type Hop, type HopCapture, type PathCapture } from './capture';
import type { ActiveTrace, FlowLine, FlowRecord, FlowSpec, TraceNetns } from './flow-types';

/** which trace tools this host has, and a line in `missing` for each part of the trace a lacking one costs */
export function traceTools(): { canTrace: boolean; hasNft: boolean; hasConntrack: boolean; missing: string[] } {
  const missing: string[] = [];
  // nft is the monitor (nft monitor trace) and reads each rule's place; iptables-restore adds the TRACE rules
  const hasNft = hasTool('nft');
  const canTrace = hasNft && hasTool('iptables-restore') && hasTool('stdbuf');
  if (!canTrace) missing.push('netfilter: nft, iptables-restore or stdbuf is not installed (no rule-by-rule steps)');
  const hasConntrack = hasTool('conntrack');
  if (!hasConntrack) missing.push('conntrack: not installed (no conntrack step)');
  return { canTrace, hasNft, hasConntrack, missing };
}

/** the source ports of one netns and family: one monitor and one set of TRACE rules serve them all */
export interface TracedPorts {
  netns: TraceNetns;
  family: 4 | 6;
  ports: number[];
}

/** every netns the flows cross (by key), and the source ports to trace there per family ("key/family") */
export function portsByNetns(flows: FlowSpec[]): { netnsByKey: Map<string, TraceNetns>; ports: Map<string, TracedPorts> } {
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

/** the key of a node's own netns (the host's, or a kind node's: "node:<name>") */
const isNodeKey = (key: string) => key === 'host' || key.startsWith('node:');

/**
 * seen-at: each flow's hops in path order (a pod that sends: eth0, its host veth, the bridge; a pod that receives:
 * the bridge, its host veth, eth0), a hop listed once per flow
 */
export async function seenAtHops(kernel: KernelReader, flows: FlowSpec[], netnsByKey: Map<string, TraceNetns>): Promise<Hop[][]> {
  const podHopsOf = new Map<string, Awaited<ReturnType<typeof podHops>>>();
  // a pod's netns (a node's, pinned at /proc/<pid>/ns/net, has no pod eth0 to capture on)
  for (const n of netnsByKey.values())
    if (n.path && !isNodeKey(n.key))
      podHopsOf.set(n.key, await podHops(kernel, { key: n.key, path: n.path, label: n.label, ...(n.parent && { parent: n.parent }) }));
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
export function flowLines(f: FlowSpec, parsed: Map<string, TraceLine[]>): Map<string, FlowLine[]> {
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
export function seenOnHops(hops: Hop[], captured: HopCapture[], sport: number): NonNullable<FlowRecord['seen']> {
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

/** one flow's packets (its source port, either way) of every hop's capture; hops keep their place, even if empty */
export function flowCaptures(captured: HopCapture[], sport: number): HopCapture[] {
  return captured.map((c) => ({ ...c, packets: c.packets.filter((p) => p.sport === sport || p.dport === sport) }));
}

/** every hop's capture as one pcapng, an interface per hop named "<netns>/<interface>" */
export function pcapngOf(captured: HopCapture[]): NonNullable<ActiveTrace['capture']> {
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
export class TraceRun {
  capture: PathCapture | undefined;
  /** after cleanup(): what each hop captured */
  captured: HopCapture[] | undefined;
  dropRecorder: DropRecorder | undefined;
  /** after cleanup(): what the kernel freed while the trace ran */
  drops: KernelDrop[] | undefined;
  /** one per netns (by key), for both families */
  private readonly monitors = new Map<string, NetfilterTraceMonitor>();
  /** the "key/family" entries each monitor serves */
  private readonly served = new Map<string, string[]>();
  private readonly added: Array<TracedPorts & { createdTable: boolean; createdChains: string[] }> = [];

  constructor(
    private readonly rules: NetfilterTraceRules,
    private readonly comment: string,
    private readonly netnsByKey: Map<string, TraceNetns>,
  ) {}

  async startMonitors(ports: Map<string, TracedPorts>): Promise<void> {
    const byNetns = new Map<string, { netns: TraceNetns; ports: number[] }>();
    for (const [k, e] of ports) {
      const n = byNetns.get(e.netns.key) ?? { netns: e.netns, ports: [] };
      n.ports.push(...e.ports);
      byNetns.set(e.netns.key, n);
      this.served.set(e.netns.key, [...(this.served.get(e.netns.key) ?? []), k]);
    }
    const started = await Promise.allSettled(
      [...byNetns.values()].map(async (e) => {
        this.monitors.set(e.netns.key, await NetfilterTraceMonitor.start(e.netns.path, e.ports));
      }),
    );
    const notStarted = started.find((r) => r.status === 'rejected');
    if (notStarted) throw notStarted.reason;
  }

  /**
   * each netns and family on its own, inside one held step: the adds run side by side (each is a process start, most
   * of the cost); all of them settle before a failure cleans up, so no add lands after its removal
   */
  async addRules(ports: Map<string, TracedPorts>, hasNft: boolean, signal: AbortSignal | undefined): Promise<void> {
    // read, created and added as one step (hold): no other trace's end deletes a table in between
    const settled = await this.rules.hold(() =>
      Promise.allSettled(
        [...ports.values()].map(async (e) => {
          if (signal?.aborted) throw new Error('canceled');
          // the raw table as it was: a trace creates it when absent (with its own comment, so a sweep after a kill
          // knows it), and counts one that a trace of any Podscope engine created as its own too: whichever trace
          // ends last deletes it once it is empty. Counting only this engine's (as before) left the table behind
          // when two engines traced the host at once and the creator ended first (CI, stop 42: a host `ip raw`
          // with empty chains after the suite). In a table someone else made, the chains iptables adds are deleted.
          const table = hasNft ? await this.rules.rawTable(e.netns.path, e.family) : { exists: true, chains: ['PREROUTING', 'OUTPUT'] };
          const createdTable = !table.exists || traceCommentPid(table.comment) !== undefined;
          const createdChains = createdTable ? [] : ['PREROUTING', 'OUTPUT'].filter((c) => !table.chains.includes(c));
          // recorded before adding, so a half-applied add is still removed
          this.added.push({ ...e, createdTable, createdChains });
          if (!table.exists) await this.rules.createRawTable(e.netns.path, e.family, this.comment);
          await this.rules.apply(e.netns.path, e.family, '-I', e.ports, this.comment);
        }),
      ),
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
    const remove = (tablesToo: boolean) =>
      Promise.all(
        this.added.map(async (a) => {
          try {
            await this.rules.removeTraceRules(a.netns.path, a.family, a.ports, this.comment);
            if (!tablesToo) return;
            if (a.createdTable) await this.rules.deleteEmptyRawTable(a.netns.path, a.family);
            else for (const c of a.createdChains) await this.rules.deleteRawChainIfEmpty(a.netns.path, a.family, c);
          } catch (e) {
            problems.push(`could not remove the TRACE rules in ${a.netns.label}: ${(e as Error).message}`);
          }
        }),
      );
    // removed, read and deleted as one step (hold): no other trace adds its rules to a table deleted under them. When
    // the lock cannot be had, the rules go all the same (they are this trace's alone) and the tables stay, reported
    await this.rules
      .hold(() => remove(true))
      .catch(async (e: Error) => {
        problems.push(`the raw tables this trace created are left: ${e.message}`);
        await remove(false);
      });
    return { problems, texts, monitorProblems };
  }

  /** each monitor's output by "key/family" (a netns's monitor serves both), and a line for each that lost events */
  private async stopMonitors(): Promise<{ texts: Map<string, string>; monitorProblems: Map<string, string> }> {
    const texts = new Map<string, string>();
    const monitorProblems = new Map<string, string>();
    await Promise.all(
      [...this.monitors].map(async ([nk, m]) => {
        const text = await m.stop();
        const { stderr, restarts, overflows } = m.problems();
        for (const key of this.served.get(nk) ?? []) {
          texts.set(key, text);
          const fam = key.split('/')[1];
          const where = `${this.netnsByKey.get(nk)?.label ?? nk} (IPv${fam})`;
          const msg = stderr.split('\n')[0] ?? '';
          if (restarts > 0)
            monitorProblems.set(
              key,
              `netfilter: nft monitor trace in ${where} ended ${restarts} time(s) mid-trace and was started again; the events in between are lost (${msg || 'no message'})`,
            );
          else if (overflows > 0)
            monitorProblems.set(
              key,
              `netfilter: nft monitor trace in ${where} lost events ${overflows} time(s): its netlink socket overflowed (ENOBUFS, No buffer space available)`,
            );
          else if (stderr) monitorProblems.set(key, `netfilter: nft monitor trace in ${where}: ${msg}`);
        }
      }),
    );
    return { texts, monitorProblems };
  }
}
