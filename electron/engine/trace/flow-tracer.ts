/**
 * Follows single TCP connections through the kernel while a probe makes them. For each flow (a source port the
 * engine chose before connecting, so nothing else matches) it: starts `nft monitor trace` in every netns the
 * flow crosses, adds TRACE rules for those source ports to the raw table there (v4 or v6), and afterwards reads the
 * route decisions (`ip route get`) and the conntrack entry. finish() always removes every rule it added (and a raw
 * table it created) and ends every monitor by pid, whatever happened to the connects; a start-up sweep removes the
 * rules of an engine that was killed mid-trace (their comment names its pid).
 */
import type { ProcessRunner } from '../os/exec';
import { LinuxKernelReader } from '../kernel/linux-reader';
import type { KernelReader } from '../kernel/types';
import { routeGet } from '../kernel/route-get';
import {
  hasTool,
  NetfilterTraceRules,
  orphanTraceMonitors,
  parseTraceOutput,
  podscopeTraceRules,
  traceComment,
  traceCommentPid,
  type TraceLine,
  type TraceRuleLine,
} from '../kernel/netfilter-trace';
import { parseConntrack, type ConntrackEntry } from './conntrack';
import { DropRecorder, sweepDropInstances } from './drop-reasons';
import { PathCapture, type Hop } from './capture';
import type { ActiveTrace, FlowRecord, FlowSpec, TraceNetns } from './flow-types';
import { flowCaptures, flowLines, pcapngOf, portsByNetns, seenAtHops, seenOnHops, traceTools, TraceRun } from './trace-run';

export type { ActiveTrace, FlowLine, FlowRecord, FlowSpec, TraceNetns } from './flow-types';

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

export class LinuxFlowTracer implements FlowTracer {
  private readonly rules: NetfilterTraceRules;

  constructor(
    private readonly runner: ProcessRunner,
    /** the links a capture's hops are found by (the engine's one kernel reader) */
    private readonly kernel: KernelReader = new LinuxKernelReader(runner),
  ) {
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
        flowHops = await seenAtHops(this.kernel, flows, netnsByKey);
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
        // the rules first: nft prints a rule it cached when it started, so its own TRACE rules are named as such
        // (a rule added later is only "unknown rule handle N", read back by its handle afterwards)
        await run.addRules(ports, hasNft, signal);
        await run.startMonitors(ports);
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
        // one monitor per netns saw both families: each "key/family" keeps its family's lines
        const parsed = new Map([...texts].map(([k, t]) => [k, parseTraceOutput(t).filter((l) => `${l.family}` === k.split('/')[1])]));
        // read once the TRACE rules are gone, so the raw table counts as the user sees it
        if (hasNft) await this.placeRules(parsed, netnsByKey);
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
            if (captured) {
              rec.seen = seenOnHops(flowHops[i] ?? [], captured, f.sport);
              rec.capture = pcapngOf(flowCaptures(captured, f.sport));
            }
            if (hasConntrack)
              rec.conntrack = await Promise.all(
                f.netns.map(async (n) => ({ netns: n, entries: await this.conntrack(n.path, f.family, f.sport, f.proto ?? 'tcp') })),
              );
            return rec;
          }),
        );
      },
    };
    return active;
  }

  /**
   * each traced rule's position in its chain as `iptables -L --line-numbers` counts it, and the rule in iptables form
   * (`iptables -S` at that position): one listing of each per table
   */
  private async placeRules(parsed: Map<string, TraceLine[]>, netnsByKey: Map<string, TraceNetns>): Promise<void> {
    await Promise.all(
      [...parsed].map(async ([key, lines]) => {
        const [nk, fam] = key.split('/');
        const netns = netnsByKey.get(nk!);
        if (!netns) return;
        const family = Number(fam) as 4 | 6;
        const rules = lines.filter((l): l is TraceRuleLine => l.type === 'rule' && l.handle !== undefined && !l.marksTrace);
        const tables = [...new Set(rules.map((l) => l.table))];
        const listed = new Map(
          await Promise.all(
            tables.map(
              async (t) =>
                [
                  t,
                  await Promise.all([this.rules.rulePositions(netns.path, family, t), this.rules.ruleTexts(netns.path, family, t)]),
                ] as const,
            ),
          ),
        );
        for (const l of rules) {
          const [positions, texts] = listed.get(l.table) ?? [];
          const p = positions?.get(l.chain)?.get(l.handle!);
          if (p === undefined) {
            // gone by now from the raw table, having let the packet on: a TRACE rule (this trace's, removed before
            // this read, or one nft had not cached), not a step of the path
            if (l.table === 'raw' && l.verdict === 'CONTINUE' && positions !== undefined) l.marksTrace = true;
            continue;
          }
          l.position = p;
          // an xtables-monitor line carries its rule already; nft's names it in nft's syntax only
          const text = l.rule === undefined ? texts?.get(l.chain)?.[p - 1] : undefined;
          if (text) l.rule = text;
        }
      }),
    );
  }

  private async conntrack(netnsPath: string | undefined, family: 4 | 6, sport: number, proto: 'tcp' | 'udp'): Promise<ConntrackEntry[]> {
    const args = ['-L', '-p', proto, '--orig-port-src', String(sport), '-f', family === 4 ? 'ipv4' : 'ipv6'];
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
    // as one step against the traces of running engines (hold), which may be adding rules to the same tables
    await this.rules
      .hold(async () => {
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
      })
      .catch((e: Error) => out.push({ netns: 'host', family: 4, rule: 'raw tables', error: e.message }));
    for (const i of await sweepDropInstances(pidAlive))
      out.push({ netns: 'host', family: 4, rule: `tracefs instance ${i.path}`, ...(i.error ? { error: i.error } : {}) });
    return { rules: out, monitors };
  }
}
