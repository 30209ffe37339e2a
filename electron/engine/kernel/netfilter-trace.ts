/**
 * Netfilter's own account of a packet: TRACE rules in the raw table of a netns mark the packets of a flow, and a trace
 * monitor run in that netns prints one line per rule each marked packet hits (iptables on the nf_tables backend). This
 * file reads those lines, starts and stops the monitor, and adds/removes the TRACE rules — always with a comment naming
 * Podscope and the engine's pid, so a start-up sweep can remove what a killed engine left.
 *
 * The monitor is `nft -a monitor trace` (one per netns, both families). It sizes its netlink socket's receive buffer
 * itself (16 MiB, forced past rmem_max as root), where `xtables-monitor --trace` keeps the 208 KiB default and asks the
 * kernel for every rule it prints: with other traces in the same netns (every monitor there receives every traced
 * packet) it overflowed (ENOBUFS) and exited. nft's lines look like
 *   trace id 9a9b361e ip nat OUTPUT packet: oif "lo" ip saddr 127.0.0.1 ip daddr 127.0.0.1 … tcp sport 45555 tcp dport 25999 …
 *   trace id 9a9b361e ip nat CNI-HOSTPORT-DNAT rule tcp dport 25999 … jump CNI-DN-… # handle 38 (verdict jump CNI-DN-…)
 *   trace id 9a9b361e ip raw OUTPUT policy accept
 * They name the rule in nft's syntax; the iptables form (`-A CHAIN …`) is read after the trace from `iptables -S` at
 * the rule's place in its chain (flow-tracer.ts). xtables-monitor's lines (`PACKET: 2 9a9b361e OUT=lo …`, ` TRACE: 2
 * 9a9b361e nat:CNI-HOSTPORT-DNAT:rule:0x26:JUMP:CNI-DN-…  -4 -t nat -A …`) are still read, as recorded traces have them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { ProcessRunner } from '../os/exec';
import { KeyedMutex } from '../common/keyed-mutex';
import { holdFileLockInProcess } from '../os/file-lock';

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
  /** nft's own text of the rule (nft monitor's lines), before the iptables form is known */
  nftRule?: string;
  /** the rule marks packets for tracing (`meta nftrace set 1`, a TRACE target): a trace's own, not a step of the path */
  marksTrace?: true;
}

export type TraceLine = TracePacketLine | TraceRuleLine;

const familyOf = (n: string): 4 | 6 | undefined => (n === '2' ? 4 : n === '10' ? 6 : undefined);

export function parseTraceLine(raw: string): TraceLine | undefined {
  const line = raw.trim();
  if (line.startsWith('trace id ')) return parseNftTraceLine(line);
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

const NFT_FAMILY: Record<string, 4 | 6> = { ip: 4, ip6: 6 };

/** nft's verdict words as xtables-monitor spelled them (the steps and owners read those) */
function nftVerdict(v: string): string {
  const [word, ...rest] = v.trim().split(/\s+/);
  const target = rest.join(' ').replace(/^"(.*)"$/, '$1');
  switch (word) {
    case 'jump':
      return `JUMP:${target}`;
    case 'goto':
      return `GOTO:${target}`;
    default:
      return (word ?? '').toUpperCase();
  }
}

/** one line of `nft -a monitor trace` (undefined: not a trace line of the ip/ip6 families) */
export function parseNftTraceLine(line: string): TraceLine | undefined {
  const m = /^trace id ([0-9a-f]+) (\S+) (\S+) (\S+) (packet: |rule |unknown rule |policy |verdict )(.*)$/.exec(line.trim());
  if (!m) return undefined;
  const [, id, fam, table, rawChain, kind, rest] = m as unknown as [string, string, string, string, string, string, string];
  const family = NFT_FAMILY[fam];
  if (!family) return undefined;
  const chain = rawChain.replace(/^"(.*)"$/, '$1');
  if (kind === 'packet: ') {
    const fields: Record<string, string> = {};
    const flags: string[] = [];
    const pick = (re: RegExp, key: string) => {
      const v = re.exec(rest)?.[1];
      if (v !== undefined) fields[key] = v;
    };
    pick(/\biif "([^"]*)"/, 'IN');
    pick(/\boif "([^"]*)"/, 'OUT');
    pick(/\bip6? saddr (\S+)/, 'SRC');
    pick(/\bip6? daddr (\S+)/, 'DST');
    pick(/\b(?:tcp|udp|sctp) sport (\d+)/, 'SPORT');
    pick(/\b(?:tcp|udp|sctp) dport (\d+)/, 'DPORT');
    pick(/\bmeta mark (\S+)/, 'MARK');
    const tcpFlags = /\btcp flags == (\S+(?: \| \S+)*)/.exec(rest)?.[1];
    if (tcpFlags) flags.push(...tcpFlags.split(' | ').map((f) => f.replace(/^0x.*$/, '?').toUpperCase()));
    return { type: 'packet', family, id, fields, flags };
  }
  if (kind === 'policy ') return { type: 'rule', family, id, table, chain, what: 'policy', verdict: nftVerdict(rest) };
  // the end of a user chain: back to the chain that jumped to it
  if (kind === 'verdict ') return { type: 'rule', family, id, table, chain, what: 'return', verdict: 'RETURN' };
  const v = /^(.*?)\s*\(verdict ([^)]*)\)\s*$/.exec(rest);
  const body = v ? v[1]! : rest;
  // a rule added since the monitor started is not in its cache: "unknown rule handle N", the handle alone
  const handle = (kind === 'unknown rule ' ? /^handle (\d+)\s*$/ : /#\s*handle (\d+)\s*$/).exec(body)?.[1];
  const text = kind === 'unknown rule ' ? '' : body.replace(/#\s*handle \d+\s*$/, '').trim();
  const out: TraceRuleLine = { type: 'rule', family, id, table, chain, what: 'rule', verdict: v ? nftVerdict(v[2]!) : '' };
  if (handle !== undefined) out.handle = Number(handle);
  if (text) out.nftRule = text;
  if (/\bnftrace set 1\b/.test(text)) out.marksTrace = true;
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

/**
 * The TRACE rules among `iptables -t raw -S` lines that carry this comment and trace only these source ports (each
 * rule's `--ports` list within them): one trace's own rules, never another trace's of the same engine (its ports are
 * its own, the allocator hands each port to one flow at a time).
 */
export function traceRulesOfPorts(saveLines: string[], comment: string, ports: readonly number[]): string[] {
  const own = new Set(ports.map(String));
  return podscopeTraceRules(saveLines).flatMap(({ rule }) => {
    const list = /--ports (\S+)/.exec(rule)?.[1];
    return rule.includes(`--comment "${comment}"`) && list?.split(',').every((p) => own.has(p)) ? [rule] : [];
  });
}

/**
 * Edits of the raw tables, one step at a time, by every Podscope process on the host (a flock on RAW_TABLE_LOCK) and
 * within this one (a mutex in front of it, so that this engine's steps queue here instead of each starting a waiting
 * flock(1)). A trace reads each table it uses, creates it when absent and adds its rules as one step, and at its end
 * removes its rules, reads what is left and deletes a table it counts as its own when nothing is left, as one step;
 * two such steps must never interleave. Two engines tracing the host at once did (CI, stop 42 and after): one read the
 * table empty and deleted it just after the other had added its rules to it, and that trace then saw no netfilter
 * event on the host at all. A step covers every netns and family of the trace (the edits inside it still run side by
 * side), so a trace takes the lock twice, not once per table: each take is a process start.
 * Edits by other programs are not ordered by this: nft deletes a table with whatever is in it, so a rule someone else
 * adds between the read and the delete is lost, a window of milliseconds documented in docs/semantics.md.
 */
const tableSteps = new KeyedMutex();

/** one file for every netns (a file per netns would be left behind for each pod ever traced); /run/lock is tmpfs */
export const RAW_TABLE_LOCK = '/run/lock/podscope-raw-tables.lock';
/** a held step runs a few iptables/nft commands per table; waiting longer than this means a holder is stuck */
const RAW_TABLE_LOCK_WAIT_SECONDS = 30;

/**
 * adds/removes TRACE rules and reads the raw table of one netns (undefined: the host's). Every method that edits a
 * table expects the caller to hold the tables (`hold`), so that a step of several edits is one step to other traces.
 */
export class NetfilterTraceRules {
  constructor(
    private readonly runner: ProcessRunner,
    private readonly lockFile = RAW_TABLE_LOCK,
  ) {}

  /** runs `step` holding the raw tables against this engine's other traces and every other Podscope process */
  async hold<T>(step: () => Promise<T>): Promise<T> {
    return tableSteps.run('raw', async () => {
      // /run/lock is there on Debian (systemd makes it at boot); a container or a minimal host may lack it
      mkdirSync(dirname(this.lockFile), { recursive: true });
      const held = await (this.runner.holdFileLock?.(this.lockFile, RAW_TABLE_LOCK_WAIT_SECONDS) ??
        holdFileLockInProcess(this.lockFile, RAW_TABLE_LOCK_WAIT_SECONDS));
      if (!held)
        throw new Error(`the raw tables' lock ${this.lockFile} was held by another process for over ${RAW_TABLE_LOCK_WAIT_SECONDS} s`);
      try {
        return await step();
      } finally {
        held.release();
      }
    });
  }

  /** (held) */
  async apply(netnsPath: string | undefined, family: Family, op: '-I' | '-D', ports: number[], comment: string): Promise<void> {
    const r = await this.runner.run({
      ...inNetns(netnsPath, tool(family, 'restore'), ['-n']),
      input: traceRulesRestore(op, ports, comment),
      timeoutMs: 10_000,
    });
    if (r.exitCode !== 0) throw new Error(`${tool(family, 'restore')} ${op}: ${r.stderr.trim() || `exit ${String(r.exitCode)}`}`);
  }

  /**
   * (held) Removes one trace's TRACE rules (`-D` of what `apply('-I')` added), then reads the table back and deletes
   * any of them still there: a rule that was in the chain twice (`-D` takes the first match only) or whose `-D` failed
   * must not outlive the trace, since a TRACE rule left behind marks every later packet of that port for tracing.
   * Throws when one is still there after that, or when the `-D` failed (with what could be removed removed).
   */
  async removeTraceRules(netnsPath: string | undefined, family: Family, ports: number[], comment: string): Promise<void> {
    const first = await this.apply(netnsPath, family, '-D', ports, comment).then(
      () => undefined,
      (e: Error) => e,
    );
    const left = traceRulesOfPorts(await this.rawRules(netnsPath, family), comment, ports);
    for (const rule of left) await this.deleteRule(netnsPath, family, rule);
    if (left.length > 0) {
      const still = traceRulesOfPorts(await this.rawRules(netnsPath, family), comment, ports);
      if (still.length > 0) throw new Error(`${still.length} TRACE rule(s) still in the raw table after removal: ${still[0]}`);
    }
    if (first) throw first;
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

  /** (held) */
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

  /**
   * Each chain's rules as `iptables -t <table> -S` prints them (`-A CHAIN …`), in order: the rule at position N of a
   * chain is the iptables form of the rule a trace names by its handle. Empty when the table cannot be listed.
   */
  async ruleTexts(netnsPath: string | undefined, family: Family, table: string): Promise<Map<string, string[]>> {
    const r = await this.runner
      .run({ ...inNetns(netnsPath, tool(family, 'iptables'), ['-t', table, '-S']), timeoutMs: 10_000 })
      .catch(() => undefined);
    const out = new Map<string, string[]>();
    if (r?.exitCode !== 0) return out;
    for (const l of r.stdout.split('\n')) {
      const chain = /^-A (\S+) /.exec(l)?.[1];
      if (!chain) continue;
      const list = out.get(chain) ?? [];
      list.push(l.trim());
      out.set(chain, list);
    }
    return out;
  }

  /** (held) creates an empty `ip raw`/`ip6 raw` carrying this comment (the trace's own, naming the engine's pid) */
  async createRawTable(netnsPath: string | undefined, family: Family, comment: string): Promise<void> {
    const r = await this.runner.run({
      ...inNetns(netnsPath, 'nft', ['add', 'table', nftFamily(family), 'raw', `{ comment "${comment}" ; }`]),
      timeoutMs: 10_000,
    });
    if (r.exitCode !== 0) throw new Error(`nft add table ${nftFamily(family)} raw: ${r.stderr.trim()}`);
  }

  /**
   * (held: another trace adding its rules between the read and the delete would lose them) deletes `ip raw`/`ip6 raw`
   * when no rule is left in it; true when it was deleted
   */
  async deleteEmptyRawTable(netnsPath: string | undefined, family: Family): Promise<boolean> {
    const left = (await this.rawRules(netnsPath, family)).filter((l) => l.startsWith('-A ') || l.startsWith('-N '));
    if (left.length > 0) return false;
    const r = await this.runner.run({ ...inNetns(netnsPath, 'nft', ['delete', 'table', nftFamily(family), 'raw']), timeoutMs: 10_000 });
    return r.exitCode === 0;
  }

  /** (held) deletes a chain of the raw table that a trace made iptables create; the kernel refuses while it has rules */
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

/** nft's note on a rule using an xtables extension it has no printer for (iptables-nft's DNAT, comment, …) */
const XT_UNKNOWN = /^XT (target|match) \S+ not found\s*$/;

/**
 * The end of a stream's text, about `max` characters, cut at a line start: a line cut in the middle ("…ot found" of
 * nft's "XT target DNAT not found", seen under load) would read as a message of its own.
 */
export function keepLastLines(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.indexOf('\n', text.length - max);
  return cut === -1 ? text.slice(-max) : text.slice(cut + 1);
}

/** what nft prints (on stdout) when its netlink socket overflowed and events were dropped */
const NFT_LOST = /^# ERROR: We lost some netlink events!/m;

/**
 * `nft -a monitor trace` in one netns, for as long as a trace runs, for both families; stop() ends it by its pid.
 * A monitor that ends by itself is started again at once, and one that lost events says so: the trace then says how
 * many times, since those events are gone.
 */
export class NetfilterTraceMonitor {
  private out = '';
  /** the part of the last chunk after its last newline */
  private partial = '';
  /** trace ids whose packet carried one of `ports`: their lines are kept */
  private readonly ours = new Set<string>();
  /** it printed something: it had started (one that ends before is not started again) */
  private printed = false;
  private child!: ChildProcess;
  private exited!: Promise<void>;
  private exitedNow = false;
  private stopping = false;
  private restarts = 0;
  private err = '';

  private constructor(
    private readonly netnsPath: string | undefined,
    /** keep only the packets with one of these as source or destination port (undefined: every line) */
    private readonly ports: Set<number> | undefined,
  ) {
    this.spawn();
  }

  /**
   * Every monitor in a netns receives every traced packet there, other traces' too: only this trace's lines are kept
   * (a packet line names the ports and comes before the rule lines of its trace id), so memory and parsing stay with
   * this trace's own packets however busy the netns is.
   */
  private keep(chunk: string): void {
    this.printed = true;
    const text = this.partial + chunk;
    const end = text.lastIndexOf('\n');
    this.partial = text.slice(end + 1);
    if (end < 0) return;
    if (!this.ports) {
      this.out += text.slice(0, end + 1);
      return;
    }
    for (const line of text.slice(0, end).split('\n')) {
      const id = /^trace id ([0-9a-f]+) /.exec(line)?.[1];
      if (id === undefined) {
        if (line.startsWith('#')) this.out += `${line}\n`;
        continue;
      }
      if (!this.ours.has(id)) {
        const m = / packet: .*\b(?:tcp|udp) sport (\d+) (?:tcp|udp) dport (\d+)/.exec(line);
        if (!m || !(this.ports.has(Number(m[1])) || this.ports.has(Number(m[2])))) continue;
        this.ours.add(id);
      }
      this.out += `${line}\n`;
    }
  }

  private spawn(): void {
    // stdbuf -oL: into a pipe the monitor's stdout is block-buffered, and the lines still in the buffer when it is
    // stopped would be lost; nsenter and stdbuf exec, so the pid held here is the monitor's own. -a: each rule's handle
    const { file, args } = inNetns(this.netnsPath, 'stdbuf', ['-oL', 'nft', '-a', 'monitor', 'trace']);
    // the engine's pid in its environment: a start-up sweep ends the monitors of an engine that was killed
    const env = { ...process.env, [TRACE_MONITOR_ENV]: String(process.pid) };
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    this.child = child;
    this.exitedNow = false;
    child.stdout!.on('data', (b: Buffer) => this.keep(b.toString('utf8')));
    child.stderr!.on('data', (b: Buffer) => {
      this.err = keepLastLines(this.err + b.toString('utf8'), 2000);
    });
    this.exited = new Promise((resolve) => {
      let once = false;
      const done = () => {
        if (once) return;
        once = true;
        this.exitedNow = true;
        // ended by itself while the trace still runs: start it again (a failed start ends here for good)
        if (!this.stopping && this.restarts < MONITOR_RESTARTS && this.printed) {
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
  static async start(netnsPath: string | undefined, ports?: number[], settleMs = 150): Promise<NetfilterTraceMonitor> {
    const m = new NetfilterTraceMonitor(netnsPath, ports && new Set(ports));
    await new Promise((r) => setTimeout(r, settleMs));
    if (m.exitedNow) throw new Error(`nft monitor trace did not start: ${m.err.trim() || 'exited'}`);
    return m;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** what it printed so far */
  text(): string {
    return this.out;
  }

  /**
   * what it wrote to stderr, how many times it ended by itself and was started again, and how many times it said its
   * socket overflowed (each: events were lost)
   */
  problems(): { stderr: string; restarts: number; overflows: number } {
    // nft says so for each iptables-nft rule whose xtables extension it cannot print (portmap's DNAT, the comment
    // match); the event itself is kept, with the handle the rule is read back by
    const stderr = this.err
      .split('\n')
      .filter((l) => l.trim() && !XT_UNKNOWN.test(l))
      .join('\n');
    const overflows =
      (this.out.match(new RegExp(NFT_LOST.source, 'gm')) ?? []).length + (this.err.match(new RegExp(NFT_LOST.source, 'gm')) ?? []).length;
    return { stderr: stderr.trim(), restarts: this.restarts, overflows };
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
    // a last line without its newline (the monitor was ended mid-write) is kept if whole enough to parse
    if (this.partial) this.keep('\n');
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
