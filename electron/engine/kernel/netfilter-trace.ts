/**
 * Netfilter's own account of a packet: TRACE rules in the raw table of a netns mark the packets of a flow, and
 * `xtables-monitor --trace` run in that netns prints one line per rule each marked packet hits (iptables on the
 * nf_tables backend). This file reads those lines, starts and stops the monitor, and adds/removes the TRACE rules —
 * always with a comment naming Podscope and the engine's pid, so a start-up sweep can remove what a killed engine left.
 *
 * A line looks like
 *   PACKET: 2 9a9b361e OUT=lo SRC=127.0.0.1 DST=127.0.0.1 … SPORT=45555 DPORT=25999 SYN
 *    TRACE: 2 9a9b361e nat:CNI-HOSTPORT-DNAT:rule:0x26:JUMP:CNI-DN-…  -4 -t nat -A CNI-HOSTPORT-DNAT … -j CNI-DN-…
 *    TRACE: 2 9a9b361e raw:OUTPUT:policy:ACCEPT
 * where 2/10 is AF_INET/AF_INET6 and the hex word is the kernel's per-packet trace id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ProcessRunner } from '../os/exec';

export interface TracePacketLine {
  type: 'packet';
  family: 4 | 6;
  id: string;
  /** IN, OUT, SRC, DST, SPORT, DPORT, MARK, … */
  fields: Record<string, string>;
  /** SYN, ACK, RST, FIN, LOOPBACK, DF, … */
  flags: string[];
}

export interface TraceRuleLine {
  type: 'rule';
  family: 4 | 6;
  id: string;
  table: string;
  chain: string;
  /** "rule" for a rule's verdict, "policy" for the chain's policy, "return" for the end of a user chain */
  what: string;
  handle?: number;
  /**
   * the rule's place in its chain as `iptables -L --line-numbers` counts it (1 = first), read after the trace from the
   * chain's rules in order (`nft -a list table`); absent when it could not be read (no nft, the rule gone since)
   */
  position?: number;
  /** CONTINUE, ACCEPT, DROP, JUMP:<chain>, GOTO:<chain>, RETURN, policy verdicts as ACCEPT/DROP */
  verdict: string;
  /** the rule as iptables-save prints it (`-A CHAIN …`), when the line carries one */
  rule?: string;
}

export type TraceLine = TracePacketLine | TraceRuleLine;

const familyOf = (n: string): 4 | 6 | undefined => (n === '2' ? 4 : n === '10' ? 6 : undefined);

export function parseTraceLine(raw: string): TraceLine | undefined {
  const line = raw.trim();
  const m = /^(PACKET|TRACE):\s+(\d+)\s+([0-9a-f]+)\s+(.*)$/.exec(line);
  if (!m) return undefined;
  const family = familyOf(m[2]!);
  if (!family) return undefined;
  const id = m[3]!;
  const rest = m[4]!;
  if (m[1] === 'PACKET') {
    const fields: Record<string, string> = {};
    const flags: string[] = [];
    for (const tok of rest.split(/\s+/).filter(Boolean)) {
      const eq = tok.indexOf('=');
      if (eq > 0) fields[tok.slice(0, eq)] = tok.slice(eq + 1);
      else flags.push(tok);
    }
    return { type: 'packet', family, id, fields, flags };
  }
  // "<table>:<chain>:<what>[:<handle>]:<verdict…>" then, after two spaces, the rule in save form
  const gap = rest.indexOf('  ');
  const head = gap >= 0 ? rest.slice(0, gap) : rest;
  const ruleText = gap >= 0 ? rest.slice(gap).trim() : '';
  const parts = head.split(':');
  if (parts.length < 3) return undefined;
  const [table, chain, what, ...tail] = parts as [string, string, string, ...string[]];
  let handle: number | undefined;
  if (what === 'rule' && /^0x[0-9a-f]+$/i.test(tail[0] ?? '')) handle = parseInt(tail.shift()!, 16);
  const verdict = tail.join(':') || (what === 'return' ? 'RETURN' : '');
  const out: TraceRuleLine = { type: 'rule', family, id, table, chain, what, verdict };
  if (handle !== undefined) out.handle = handle;
  // "-4 -t nat -A OUTPUT …" → "-A OUTPUT …", as iptables-save prints it
  const rule = ruleText.replace(/^-[46]\s+-t\s+\S+\s+/, '');
  if (rule) out.rule = rule;
  return out;
}

export function parseTraceOutput(text: string): TraceLine[] {
  return text.split('\n').flatMap((l) => {
    const p = parseTraceLine(l);
    return p ? [p] : [];
  });
}

/**
 * The lines of the packets of one flow, told apart by the prober's source port: a packet of the flow has it as SPORT
 * (the way out) or as DPORT (the way back); with `dport` given, the way out must also go to that port (before NAT)
 * or to `natPorts` (after it). Lines of other flows that share the monitor are left out.
 */
export function linesOfFlow(lines: TraceLine[], sport: number, opts: { dports?: number[] } = {}): Array<TraceLine & { reply: boolean }> {
  const dir = new Map<string, boolean>();
  for (const l of lines) {
    if (l.type !== 'packet') continue;
    const s = Number(l.fields.SPORT);
    const d = Number(l.fields.DPORT);
    if (s === sport && (!opts.dports || opts.dports.includes(d))) dir.set(l.id, dir.get(l.id) ?? false);
    else if (d === sport && (!opts.dports || opts.dports.includes(s))) dir.set(l.id, dir.get(l.id) ?? true);
  }
  return lines.flatMap((l) => (dir.has(l.id) ? [{ ...l, reply: dir.get(l.id)! }] : []));
}

/** set in the environment of every monitor: the pid of the engine that started it */
export const TRACE_MONITOR_ENV = 'PODSCOPE_TRACE_ENGINE_PID';

/** the comment every TRACE rule of this engine carries: the sweep removes those whose pid is gone */
export const TRACE_COMMENT_PREFIX = 'podscope-trace';
export const traceComment = (pid: number) => `${TRACE_COMMENT_PREFIX} pid=${pid}`;

/** iptables-restore input adding (-I) or deleting (-D) the TRACE rules for these source ports, both ways, both hooks */
export function traceRulesRestore(op: '-I' | '-D', ports: number[], comment: string): string {
  const lines = ['*raw'];
  // multiport takes at most 15 ports per rule
  for (let i = 0; i < ports.length; i += 15) {
    const list = ports.slice(i, i + 15).join(',');
    // udp too: a DNS path's query is a UDP flow from a source port chosen the same way (and TCP when truncated)
    for (const proto of ['tcp', 'udp'])
      for (const chain of ['PREROUTING', 'OUTPUT'])
        lines.push(`${op} ${chain} -p ${proto} -m multiport --ports ${list} -m comment --comment "${comment}" -j TRACE`);
  }
  lines.push('COMMIT', '');
  return lines.join('\n');
}

/** `-A …` lines of `iptables -t raw -S` that are TRACE rules of a Podscope engine, with the pid they name */
export function podscopeTraceRules(saveLines: string[]): Array<{ rule: string; pid: number }> {
  return saveLines.flatMap((l) => {
    if (!l.startsWith('-A ') || !/-j TRACE\b/.test(l)) return [];
    const m = new RegExp(`--comment "?${TRACE_COMMENT_PREFIX} pid=(\\d+)"?`).exec(l);
    return m ? [{ rule: l, pid: Number(m[1]) }] : [];
  });
}

type Family = 4 | 6;
const tool = (f: Family, what: 'iptables' | 'restore') =>
  what === 'iptables' ? (f === 4 ? 'iptables' : 'ip6tables') : f === 4 ? 'iptables-restore' : 'ip6tables-restore';

function inNetns(netnsPath: string | undefined, file: string, args: string[]): { file: string; args: string[] } {
  return netnsPath === undefined ? { file, args } : { file: 'nsenter', args: [`--net=${netnsPath}`, file, ...args] };
}

/** adds/removes TRACE rules and reads the raw table of one netns (undefined: the host's) */
export class NetfilterTraceRules {
  constructor(private readonly runner: ProcessRunner) {}

  async apply(netnsPath: string | undefined, family: Family, op: '-I' | '-D', ports: number[], comment: string): Promise<void> {
    const r = await this.runner.run({
      ...inNetns(netnsPath, tool(family, 'restore'), ['-n']),
      input: traceRulesRestore(op, ports, comment),
      timeoutMs: 10_000,
    });
    if (r.exitCode !== 0) throw new Error(`${tool(family, 'restore')} ${op}: ${r.stderr.trim() || `exit ${String(r.exitCode)}`}`);
  }

  /**
   * `iptables -t raw -S` lines (empty when it cannot be read); tried a few times, since a read can fail while
   * another process changes the ruleset (and a sweep that read nothing would leave a killed engine's rules)
   */
  async rawRules(netnsPath: string | undefined, family: Family): Promise<string[]> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.runner.run({ ...inNetns(netnsPath, tool(family, 'iptables'), ['-t', 'raw', '-S']), timeoutMs: 10_000 });
      if (r.exitCode === 0) return r.stdout.split('\n').filter(Boolean);
      if (attempt >= 2) return [];
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  async deleteRule(netnsPath: string | undefined, family: Family, saveLine: string): Promise<void> {
    const r = await this.runner.run({
      ...inNetns(netnsPath, tool(family, 'restore'), ['-n']),
      input: `*raw\n${saveLine.replace(/^-A /, '-D ')}\nCOMMIT\n`,
      timeoutMs: 10_000,
    });
    if (r.exitCode !== 0) throw new Error(`${tool(family, 'restore')}: ${r.stderr.trim()}`);
  }

  /**
   * The nf_tables table `ip raw`/`ip6 raw` as `nft list table` shows it (needs nft): whether it exists, the comment
   * it carries and its chains. Adding an iptables rule to the raw table creates the table (and the chain) when
   * absent; a trace creates the table itself first, with its comment, so the end of the trace, or the start-up sweep
   * after a killed engine, knows whose it is and deletes it again once it is empty.
   */
  async rawTable(netnsPath: string | undefined, family: Family): Promise<{ exists: boolean; comment?: string; chains: string[] }> {
    const r = await this.runner.run({ ...inNetns(netnsPath, 'nft', ['list', 'table', nftFamily(family), 'raw']), timeoutMs: 10_000 });
    if (r.exitCode !== 0) return { exists: false, chains: [] };
    const comment = /^\s*comment "([^"]*)"/m.exec(r.stdout.split(/\n\s*chain /)[0] ?? '')?.[1];
    const chains = [...r.stdout.matchAll(/^\s*chain (\S+) \{/gm)].map((m) => m[1]!);
    return comment === undefined ? { exists: true, chains } : { exists: true, comment, chains };
  }

  /**
   * Each rule's position in its chain, by chain and nft handle: iptables-nft lists a chain's rules in the table's
   * order, so the 1-based index of a handle among its chain's rules is the number `iptables -L --line-numbers` shows
   * (the handle itself is nft's id for the rule, which iptables never shows). Empty when the table cannot be listed.
   */
  async rulePositions(netnsPath: string | undefined, family: Family, table: string): Promise<Map<string, Map<number, number>>> {
    const r = await this.runner
      .run({ ...inNetns(netnsPath, 'nft', ['-a', 'list', 'table', nftFamily(family), table]), timeoutMs: 10_000 })
      .catch(() => undefined);
    return r?.exitCode === 0 ? parseRulePositions(r.stdout) : new Map();
  }

  /** creates an empty `ip raw`/`ip6 raw` carrying this comment (the trace's own, naming the engine's pid) */
  async createRawTable(netnsPath: string | undefined, family: Family, comment: string): Promise<void> {
    const r = await this.runner.run({
      ...inNetns(netnsPath, 'nft', ['add', 'table', nftFamily(family), 'raw', `{ comment "${comment}" ; }`]),
      timeoutMs: 10_000,
    });
    if (r.exitCode !== 0) throw new Error(`nft add table ${nftFamily(family)} raw: ${r.stderr.trim()}`);
  }

  /** deletes `ip raw`/`ip6 raw` when no rule is left in it; true when it was deleted */
  async deleteEmptyRawTable(netnsPath: string | undefined, family: Family): Promise<boolean> {
    const left = (await this.rawRules(netnsPath, family)).filter((l) => l.startsWith('-A ') || l.startsWith('-N '));
    if (left.length > 0) return false;
    const r = await this.runner.run({ ...inNetns(netnsPath, 'nft', ['delete', 'table', nftFamily(family), 'raw']), timeoutMs: 10_000 });
    return r.exitCode === 0;
  }

  /** deletes a chain of the raw table that a trace made iptables create; the kernel refuses while it has rules */
  async deleteRawChainIfEmpty(netnsPath: string | undefined, family: Family, chain: string): Promise<void> {
    await this.runner.run({ ...inNetns(netnsPath, 'nft', ['delete', 'chain', nftFamily(family), 'raw', chain]), timeoutMs: 10_000 });
  }
}

const nftFamily = (f: Family) => (f === 4 ? 'ip' : 'ip6');

/**
 * `nft -a list table …` → chain → handle → 1-based position. A rule is a line inside a chain ending in
 * `# handle N`; a chain's own line carries its handle after `{`, and its type/policy line carries none.
 */
export function parseRulePositions(text: string): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  let chain: Map<number, number> | undefined;
  for (const line of text.split('\n')) {
    const head = /^\s*chain (\S+) \{/.exec(line);
    if (head) {
      chain = new Map();
      out.set(head[1]!.replace(/^"(.*)"$/, '$1'), chain);
      continue;
    }
    if (/^\s*\}\s*$/.test(line)) {
      chain = undefined;
      continue;
    }
    const h = /# handle (\d+)\s*$/.exec(line);
    if (chain && h) chain.set(Number(h[1]), chain.size + 1);
  }
  return out;
}

/** the pid a Podscope trace comment names (`podscope-trace pid=<n>`), if it is one */
export function traceCommentPid(comment: string | undefined): number | undefined {
  const m = new RegExp(`^${TRACE_COMMENT_PREFIX} pid=(\\d+)$`).exec(comment ?? '');
  return m ? Number(m[1]) : undefined;
}

/** most times a monitor that ended by itself is started again within one trace */
const MONITOR_RESTARTS = 5;

/**
 * `xtables-monitor --trace -4|-6` in one netns, for as long as a trace runs; stop() ends it by its pid.
 *
 * xtables-monitor 1.8.9 exits when it cannot print a rule a traced packet hit ("unsupported layer 4 protocol value":
 * it fails on portmap's IPv6 rules in CNI-DN-*), and every event after that would be lost. So one monitor runs per
 * family (an IPv4 flow never meets the IPv6 rules), and a monitor that ends by itself is started again at once; the
 * trace says how many times, since the events in between are gone.
 */
export class NetfilterTraceMonitor {
  private out = '';
  private child!: ChildProcess;
  private exited!: Promise<void>;
  private exitedNow = false;
  private stopping = false;
  private restarts = 0;
  private err = '';

  private constructor(
    private readonly netnsPath: string | undefined,
    private readonly family: 4 | 6,
  ) {
    this.spawn();
  }

  private spawn(): void {
    // stdbuf -oL: into a pipe the monitor's stdout is block-buffered, and the lines still in the buffer when it is
    // stopped would be lost; nsenter and stdbuf exec, so the pid held here is the monitor's own
    const { file, args } = inNetns(this.netnsPath, 'stdbuf', ['-oL', 'xtables-monitor', '--trace', `-${this.family}`]);
    // the engine's pid in its environment: a start-up sweep ends the monitors of an engine that was killed
    const env = { ...process.env, [TRACE_MONITOR_ENV]: String(process.pid) };
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    this.child = child;
    this.exitedNow = false;
    child.stdout!.on('data', (b: Buffer) => {
      this.out += b.toString('utf8');
    });
    child.stderr!.on('data', (b: Buffer) => {
      this.err = (this.err + b.toString('utf8')).slice(-2000);
    });
    this.exited = new Promise((resolve) => {
      let once = false;
      const done = () => {
        if (once) return;
        once = true;
        this.exitedNow = true;
        // ended by itself while the trace still runs: start it again (a failed start ends here for good)
        if (!this.stopping && this.restarts < MONITOR_RESTARTS && this.out !== '') {
          this.restarts++;
          this.spawn();
          void this.exited.then(resolve);
          return;
        }
        resolve();
      };
      child.once('exit', done);
      child.once('error', (e) => {
        this.err += e.message;
        done();
      });
    });
  }

  /** starts the monitor; resolves once it has had time to subscribe (it prints nothing until a packet is traced) */
  static async start(netnsPath: string | undefined, family: 4 | 6, settleMs = 150): Promise<NetfilterTraceMonitor> {
    const m = new NetfilterTraceMonitor(netnsPath, family);
    await new Promise((r) => setTimeout(r, settleMs));
    if (m.exitedNow) throw new Error(`xtables-monitor --trace did not start: ${m.err.trim() || 'exited'}`);
    return m;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** what it printed so far */
  text(): string {
    return this.out;
  }

  /** what it wrote to stderr, and how many times it ended by itself and was started again (events were lost) */
  problems(): { stderr: string; restarts: number } {
    return { stderr: this.err.trim(), restarts: this.restarts };
  }

  /** ends the monitor by its pid (SIGTERM, then SIGKILL) and returns everything it printed */
  async stop(): Promise<string> {
    this.stopping = true;
    const child = this.child;
    if (!this.exitedNow && child.pid !== undefined) {
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 1000);
      await this.exited;
      clearTimeout(timer);
    }
    return this.out;
  }
}

/** whether an executable of this name is on PATH (or in the sbin dirs root's PATH has): a trace says which tool it lacked */
export function hasTool(name: string): boolean {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'].filter(Boolean);
  return dirs.some((d) => {
    try {
      accessSync(join(d, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** monitors (by their environment) started by an engine whose pid is not `except` and is no longer running */
export function orphanTraceMonitors(except: number, alive: (pid: number) => boolean): Array<{ pid: number; enginePid: number }> {
  const out: Array<{ pid: number; enginePid: number }> = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${d}/environ`, 'latin1');
    } catch {
      continue;
    }
    const m = new RegExp(`(?:^|\0)${TRACE_MONITOR_ENV}=(\\d+)(?:\0|$)`).exec(environ);
    if (!m) continue;
    const enginePid = Number(m[1]);
    if (enginePid !== except && !alive(enginePid)) out.push({ pid: Number(d), enginePid });
  }
  return out;
}
