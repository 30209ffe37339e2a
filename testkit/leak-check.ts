/**
 * One leak checker for every real test: given what a test owns (its bridge, subnets, sandbox ids, dirs), lists what
 * is still on the host — netns files and mounts, interfaces on the bridge and the bandwidth plugin's ifb devices
 * (with their tc qdiscs), host-local reservations, iptables and ip6tables nat/filter chains and rules that mention
 * the ids or subnets (CNI-DN-*, CNI-HOSTPORT-* rules, the bridge's ipMasq CNI-<hash> chain), libcni cache files,
 * runc containers under the engine's root and the engine's own records and per-sandbox dirs; and what the other
 * reference plugins leave on the host when their DEL misses something: firewall's CNI-FORWARD/CNI-ADMIN rules (they
 * name the pod's IP only, no network or id), policy rules and routes in any table naming the subnets (sbr, ptp's host
 * routes), host links holding an address of the subnets (ptp's host veth), sysctls a test knows a plugin may change
 * (tuning), and host links a plugin moved into a pod (host-device) that did not come back as they were.
 * Everything is scoped: other tests create pods at the same time, so nothing outside the scope is ever reported or
 * touched. `sweepLeftovers` removes what `findLeftovers` reports, so a failing test still cleans up after itself.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { kernelCommands, type KernelCommand } from '../electron/engine/kernel/commands';
import { parseSave, ruleSpecLines, ruleWords } from '../electron/engine/kernel/netfilter';
import { parseLinks, parseQdiscs, parseRoutes, parseRules, sysctlPath } from '../electron/engine/kernel/parse';
import type { KernelLink, KernelQdisc, KernelRoute, NetfilterTable } from '../electron/engine/kernel/types';

export interface LeakScope {
  /** the test's bridge: every interface enslaved to it is a leftover */
  bridge?: string;
  /** CIDRs the test's IPAM hands out (e.g. 10.200.0.0/24, fd00:200::/64); rules mentioning them are leftovers */
  subnets?: string[];
  /** CNI network names (for the plugins' hashed chain and ifb names) */
  networks?: string[];
  /** sandbox ids = CNI container ids = runc container ids */
  ids?: string[];
  /** host-local dataDir: any reservation file in it (or naming an id) is a leftover */
  ipamDir?: string;
  /** libcni cache dir (results under <dir>/results) */
  cacheDir?: string;
  /** engine state dir: records (<dir>/store/*.json) and per-sandbox dirs */
  stateDir?: string;
  /** engine run dir: runc root (<dir>/runc), bundles and shm mounts */
  runDir?: string;
  /** a netns dir the test owns: any namespace file in it is a leftover */
  netnsDir?: string;
  /** netns paths known to belong to the test (when the netns dir is shared) */
  netnsPaths?: string[];
  /** when the dirs are the test's alone: report every record / cache file / container there, not only the ids' */
  ownsDirs?: boolean;
  /** pod addresses (no prefix) the test saw: rules naming `<ip>/` are leftovers even outside `subnets` */
  podIps?: string[];
  /** host sysctls (e.g. net.ipv4.conf.plkhd0.rp_filter) and the value each had before the test */
  sysctls?: Record<string, string>;
  /** host links a plugin may take into a pod (host-device): each must be back in the host netns, in the state given */
  hostLinks?: Array<{ name: string; state?: string }>;
}

export type LeftoverKind =
  | 'netns'
  | 'mount'
  | 'interface'
  | 'qdisc'
  | 'ipam'
  | 'iptables'
  | 'ip6tables'
  | 'rule'
  | 'route'
  | 'sysctl'
  | 'moved-link'
  | 'cache'
  | 'runc'
  | 'record'
  | 'dir';

export interface Leftover {
  kind: LeftoverKind;
  /** what it is, e.g. a path, an interface name or an iptables rule as `-S` prints it */
  what: string;
  /** for iptables rules: the table (nat/filter); for policy rules and routes: 4 or 6 */
  table?: string;
}

const hash = (prefix: string, text: string, length: number) =>
  `${prefix}${createHash('sha512').update(text).digest('hex')}`.slice(0, length);
/** the plugins' utils.FormatChainName: CNI-<sha512(network+id)>, 28 characters */
export const ipMasqChain = (network: string, id: string) => hash('CNI-', network + id, 28);
/** portmap's per-container DNAT chain */
export const dnatChain = (network: string, id: string) => hash('CNI-DN-', network + id, 28);
/** the bandwidth plugin's ifb device for ingress shaping */
export const ifbDevice = (network: string, id: string) => hash('bwp', network + id, 15);

function sh(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** what a set of kernel commands printed, by command: a command that failed printed nothing */
type KernelTexts = Map<string, string>;
const commandKey = (cmd: KernelCommand) => JSON.stringify([cmd.file, ...cmd.args]);
const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * Runs commands through one shell, each output after a marker line: what each printed, in order ('' for one that
 * failed, as `sh` above gives), or undefined when the shell itself failed. Why: a fork of the test worker (a few
 * hundred MiB with the engine, vitest and the test loaded) costs tens of milliseconds of its CPU, and a leak check
 * ran about ten of them after every real test — a third of a real file's own CPU in a profile (plugins-leaks-real +
 * fault-matrix: 5.1 of 17.8 s in spawn from findLeftovers). The shell forks the commands cheaply; the worker forks once.
 */
export function runBatched(cmds: ReadonlyArray<{ file: string; args: readonly string[] }>): string[] | undefined {
  const marker = `::podscope-leak-check-${process.pid}-${Date.now()}::`;
  const script = cmds
    .map(
      (c) =>
        `printf '%s\\n' ${shellQuote(marker)}; out=$(${[c.file, ...c.args].map(shellQuote).join(' ')} 2>/dev/null) && printf '%s' "$out"`,
    )
    .join('\n');
  let text = '';
  try {
    // `true` last: the script's status is not one command's; all of a busy host's rules and links fit in 64 MiB
    text = execFileSync('sh', ['-c', `${script}\ntrue`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
  } catch {
    return undefined;
  }
  const parts = text.split(`${marker}\n`).slice(1);
  return parts.length === cmds.length ? parts : undefined;
}

/** The kernel reader's commands, read together (runBatched); a command missing from the map is read on its own. */
function readKernelTexts(cmds: KernelCommand[]): KernelTexts {
  const parts = runBatched(cmds);
  if (!parts) return new Map();
  return new Map(cmds.map((c, i) => [commandKey(c), parts[i] ?? '']));
}

/**
 * The engine's kernel reader is asynchronous; the leak checker is called synchronously from every real test, so it
 * runs the reader's own commands with execFileSync (read together beforehand, `texts`) and parses them with the
 * reader's own parsers.
 */
function readKernel<T>(cmd: KernelCommand, parse: (text: string) => T[], texts?: KernelTexts): T[] {
  try {
    return parse(texts?.get(commandKey(cmd)) ?? sh(cmd.file, cmd.args));
  } catch {
    return [];
  }
}

function list(dir: string | undefined): string[] {
  if (!dir) return [];
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** How an address of the subnet starts in iptables output: "10.200.0." for a /24, "fd00:200:" for a /64. */
export function subnetTextPrefix(cidr: string): string {
  const [addr, bits] = cidr.split('/');
  const len = Number(bits);
  if (addr!.includes(':')) {
    const groups = addr!.replace(/::.*$/, '').split(':').filter(Boolean);
    return `${groups.slice(0, Math.max(1, Math.floor(len / 16))).join(':')}:`;
  }
  const octets = addr!.split('.');
  return `${octets.slice(0, Math.max(1, Math.floor(len / 8))).join('.')}.`;
}

function mountPoints(): string[] {
  return read('/proc/self/mountinfo')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[4]!.replace(/\\040/g, ' '));
}

function under(path: string, dir: string | undefined): boolean {
  return !!dir && (path === dir || path.startsWith(`${dir.replace(/\/$/, '')}/`));
}

/** the qdiscs a device gets by itself are not leftovers; a plugin's (tbf, ingress) are */
const DEFAULT_QDISCS = new Set(['noqueue', 'pfifo_fast', 'fq_codel', 'mq']);

function qdiscText(q: KernelQdisc): string {
  const shape = q.rateBytesPerSecond !== undefined ? ` rate ${q.rateBytesPerSecond * 8}bit` : '';
  return `qdisc ${q.kind} ${q.handle ?? ''} ${q.root ? 'root' : `parent ${q.parent ?? '?'}`}${shape}`.replace(/ +/g, ' ');
}

export function findLeftovers(scope: LeakScope): Leftover[] {
  const out: Leftover[] = [];
  const ids = scope.ids ?? [];
  const networks = scope.networks ?? [];
  const mounts = mountPoints();

  // network namespaces: files in the test's dir (or the known paths) and nsfs mounts there
  for (const name of list(scope.netnsDir)) out.push({ kind: 'netns', what: join(scope.netnsDir!, name) });
  for (const p of scope.netnsPaths ?? []) if (existsSync(p) && !under(p, scope.netnsDir)) out.push({ kind: 'netns', what: p });
  for (const m of mounts) {
    // the netns dir itself is a (shared) mount point by design; what is below it is not
    const ours = scope.ownsDirs !== false || ids.some((id) => m.includes(id));
    if (
      (under(m, scope.netnsDir) && m !== scope.netnsDir) ||
      (scope.netnsPaths ?? []).includes(m) ||
      (ours && (under(m, scope.runDir) || under(m, scope.stateDir)))
    ) {
      out.push({ kind: 'mount', what: m });
    }
  }

  // everything read from the kernel below, in one go
  const texts = readKernelTexts([
    kernelCommands.links(),
    kernelCommands.qdiscs(),
    kernelCommands.netfilter(4),
    kernelCommands.netfilter(6),
    ...([4, 6] as const).flatMap((f) => [kernelCommands.rules(f), kernelCommands.routes(f)]),
  ]);

  // interfaces on the bridge, the ifb devices, and their qdiscs
  const links: KernelLink[] = readKernel(kernelCommands.links(), parseLinks, texts);
  const devices: string[] = scope.bridge ? links.filter((l) => l.master === scope.bridge).map((l) => l.name) : [];
  for (const n of networks) for (const id of ids) if (links.some((l) => l.name === ifbDevice(n, id))) devices.push(ifbDevice(n, id));
  const qdiscs = devices.length > 0 ? readKernel(kernelCommands.qdiscs(), parseQdiscs, texts) : [];
  for (const dev of devices) {
    out.push({ kind: 'interface', what: dev });
    for (const q of qdiscs.filter((x) => x.dev === dev && !DEFAULT_QDISCS.has(x.kind)))
      out.push({ kind: 'qdisc', what: `${dev}: ${qdiscText(q)}` });
  }

  // host-local: every reservation file (named by the IP) in the test's dataDir, or naming one of the ids
  for (const net of list(scope.ipamDir)) {
    const netDir = join(scope.ipamDir!, net);
    for (const f of list(netDir)) {
      if (f === 'lock' || f.startsWith('last_reserved_ip')) continue;
      const content = read(join(netDir, f));
      if (scope.ownsDirs !== false || ids.some((id) => content.includes(id)))
        out.push({ kind: 'ipam', what: `${join(netDir, f)} (${content.trim().replace(/\s+/g, ' ')})` });
    }
  }

  // iptables and ip6tables: chains named after the ids, and any rule mentioning an id, such a chain or a subnet
  const chainNames = networks.flatMap((n) => ids.flatMap((id) => [ipMasqChain(n, id), dnatChain(n, id)]));
  // the plugins comment their rules with `name: "<network>" id: "<id>"`: when the network is the test's alone, that
  // names them all, including those of a sandbox whose id the test never learned
  const networkComments = scope.ownsDirs !== false ? networks.map((n) => `name: \\"${n}\\"`) : [];
  const ipNeedles = (scope.podIps ?? []).map((ip) => `${ip}/`);
  const needles = [...ids, ...chainNames, ...networkComments, ...ipNeedles, ...(scope.subnets ?? []).map(subnetTextPrefix)];
  if (needles.length > 0) {
    for (const [tool, family] of [
      ['iptables', 4],
      ['ip6tables', 6],
    ] as const) {
      const tables: NetfilterTable[] = readKernel(kernelCommands.netfilter(family), (text) => parseSave(text, family), texts);
      for (const table of ['nat', 'filter']) {
        for (const rule of ruleSpecLines(tables, table)) {
          if (rule && needles.some((n) => rule.includes(n))) out.push({ kind: tool, table, what: rule });
        }
      }
    }
  }

  out.push(...routingLeftovers(scope, links, ipNeedles, texts), ...sysctlLeftovers(scope), ...movedLinkLeftovers(scope, links));

  // libcni cache: result files (and temp files) for the ids, or any file in a cache dir the test owns
  const resultsDir = scope.cacheDir ? join(scope.cacheDir, 'results') : undefined;
  for (const f of list(resultsDir)) {
    if (scope.ownsDirs !== false || ids.some((id) => f.includes(id))) out.push({ kind: 'cache', what: join(resultsDir!, f) });
  }

  // pause containers under each handler's pause root (<runDir>/runc, <runDir>/crun), and app containers under theirs
  // (<runDir>/containers/runc, where runc also keeps exec-* files of sessions in flight: those are leftovers too, as
  // the session's process is)
  for (const handler of ['runc', 'crun']) {
    const pauseRoot = scope.runDir ? join(scope.runDir, handler) : undefined;
    for (const c of list(pauseRoot)) {
      if (scope.ownsDirs !== false || ids.includes(c)) out.push({ kind: 'runc', what: `${c} (root ${pauseRoot})` });
    }
  }
  // one root per runtime handler: <runDir>/containers/runc and <runDir>/containers/crun
  for (const handler of ['runc', 'crun']) {
    const appRoot = scope.runDir ? join(scope.runDir, 'containers', handler) : undefined;
    for (const c of list(appRoot)) {
      if (scope.ownsDirs === false && !ids.includes(c)) continue;
      if (c.startsWith('exec-')) out.push({ kind: 'record', what: join(appRoot!, c) });
      else out.push({ kind: 'runc', what: `${c} (root ${appRoot})` });
    }
  }
  for (const f of list(scope.stateDir && join(scope.stateDir, 'containers-store'))) {
    if (scope.ownsDirs !== false || ids.some((id) => f.startsWith(id)))
      out.push({ kind: 'record', what: join(scope.stateDir!, 'containers-store', f) });
  }

  // the engine's records and per-sandbox dirs
  for (const f of list(scope.stateDir && join(scope.stateDir, 'store'))) {
    if (scope.ownsDirs !== false || ids.some((id) => f.startsWith(id)))
      out.push({ kind: 'record', what: join(scope.stateDir!, 'store', f) });
  }
  for (const base of [scope.stateDir, scope.runDir]) {
    for (const d of list(base && join(base, 'sandboxes'))) {
      if (scope.ownsDirs !== false || ids.includes(d)) out.push({ kind: 'dir', what: join(base!, 'sandboxes', d) });
    }
  }
  return out;
}

/** does an address or CIDR fall in one of the subnets (text prefix, as the iptables needles) or name a pod IP */
function mentionsOurs(text: string | undefined, prefixes: string[], ipNeedles: string[]): boolean {
  if (!text) return false;
  const t = text.includes('/') ? text : `${text}/`;
  return prefixes.some((p) => t.startsWith(p)) || ipNeedles.some((n) => t.startsWith(n));
}

/**
 * Policy rules naming the subnets (sbr installs `from <pod ip> lookup <table>`; in the host they are leftovers), the
 * routes of any table to or via the subnets that are not the test bridge's own connected route (ptp's /32 host
 * routes, sbr's per-table routes), and host links holding one of the subnets' addresses that are not the bridge
 * (ptp's host veth carries the gateway address).
 */
function routingLeftovers(scope: LeakScope, links: KernelLink[], ipNeedles: string[], texts?: KernelTexts): Leftover[] {
  const prefixes = (scope.subnets ?? []).map(subnetTextPrefix);
  if (prefixes.length === 0 && ipNeedles.length === 0) return [];
  const out: Leftover[] = [];
  for (const family of [4, 6] as const) {
    for (const r of readKernel(kernelCommands.rules(family), (t) => parseRules(t, family), texts)) {
      if (mentionsOurs(r.from, prefixes, ipNeedles) || mentionsOurs(r.to, prefixes, ipNeedles))
        out.push({
          kind: 'rule',
          table: String(family),
          what: `${r.priority}: from ${r.from}${r.to ? ` to ${r.to}` : ''} lookup ${r.table ?? r.action ?? '?'}`,
        });
    }
    for (const r of readKernel(kernelCommands.routes(family), (t) => parseRoutes(t, family), texts)) {
      if (r.dev !== undefined && r.dev === scope.bridge) continue;
      if (r.table === 'local' && r.dev === scope.bridge) continue;
      if (mentionsOurs(r.dst, prefixes, ipNeedles) || mentionsOurs(r.gateway, prefixes, ipNeedles))
        out.push({ kind: 'route', table: String(family), what: routeText(r) });
    }
  }
  for (const l of links) {
    if (l.name === scope.bridge || l.master === scope.bridge) continue;
    const held = l.addresses.filter((a) => mentionsOurs(a.address, prefixes, ipNeedles));
    if (held.length > 0) out.push({ kind: 'interface', what: `${l.name} (${held.map((a) => `${a.address}/${a.prefixLen}`).join(', ')})` });
  }
  return out;
}

function routeText(r: KernelRoute): string {
  const parts = [r.type && r.type !== 'unicast' ? r.type : '', r.dst, r.gateway ? `via ${r.gateway}` : '', r.dev ? `dev ${r.dev}` : ''];
  return `${parts.filter(Boolean).join(' ')} table ${r.table}`;
}

/** sysctls the test read before: each must have its value back (tuning writes them in the netns it is given) */
function sysctlLeftovers(scope: LeakScope): Leftover[] {
  const out: Leftover[] = [];
  for (const [name, before] of Object.entries(scope.sysctls ?? {})) {
    const now = read(sysctlPath(name)).trim();
    if (now !== before.trim()) out.push({ kind: 'sysctl', what: `${name} = ${now || '(unreadable)'} (was ${before.trim()})` });
  }
  return out;
}

/** links a plugin moved into a pod: back in the host netns, in the state they had */
function movedLinkLeftovers(scope: LeakScope, links: KernelLink[]): Leftover[] {
  const out: Leftover[] = [];
  for (const want of scope.hostLinks ?? []) {
    const l = links.find((x) => x.name === want.name);
    if (!l) out.push({ kind: 'moved-link', what: `${want.name}: not in the host netns (taken into a pod and not given back)` });
    else if (want.state && l.state !== want.state)
      out.push({ kind: 'moved-link', what: `${want.name}: back in the host netns ${l.state ?? '?'} (was ${want.state})` });
  }
  return out;
}

export function formatLeftovers(l: Leftover[]): string {
  return l.map((x) => `${x.kind}${x.table ? `/${x.table}` : ''}: ${x.what}`).join('\n');
}

/**
 * Removes what findLeftovers reports for the scope (best effort, idempotent): for a test's afterAll/afterEach, so a
 * failing test still leaves the host as it found it. Never touches anything outside the scope.
 */
export function sweepLeftovers(scope: LeakScope, runcPath = 'runc'): void {
  const found = findLeftovers(scope);
  for (const l of found.filter((x) => x.kind === 'runc')) {
    const m = /^(\S+) \(root (.*)\)$/.exec(l.what)!;
    // a crun root's containers are crun's to delete (the state formats differ)
    const bin = m[2]!.endsWith('/crun') ? 'crun' : runcPath;
    sh(bin, ['--root', m[2]!, 'kill', m[1]!, 'KILL']);
    sh(bin, ['--root', m[2]!, 'delete', '--force', m[1]!]);
  }
  // rules first (they reference the chains), then the chains
  for (const tool of ['iptables', 'ip6tables'] as const) {
    const rules = found.filter((x) => x.kind === tool);
    for (const r of rules.filter((x) => x.what.startsWith('-A '))) sh(tool, ['-t', r.table!, '-D', ...ruleWords(r.what).slice(1)]);
    // the chains found by name, and the per-container chains (CNI-<hash>, CNI-DN-<hash>) whose rules were ours
    const chains = new Set(rules.filter((x) => x.what.startsWith('-N ')).map((x) => `${x.table} ${x.what.slice(3).trim()}`));
    for (const r of rules.filter((x) => x.what.startsWith('-A '))) {
      const chain = r.what.split(' ')[1]!;
      if (/^CNI-(DN-)?[0-9a-f]{20,}$/.test(chain)) chains.add(`${r.table} ${chain}`);
    }
    for (const tc of chains) {
      const [table, chain] = tc.split(' ') as [string, string];
      sh(tool, ['-t', table, '-F', chain]);
      sh(tool, ['-t', table, '-X', chain]);
    }
  }
  for (const l of found.filter((x) => x.kind === 'rule')) {
    const m = /^(\d+): from (\S+)(?: to (\S+))? lookup (\S+)$/.exec(l.what);
    if (m) sh('ip', [`-${l.table}`, 'rule', 'del', 'priority', m[1]!, 'from', m[2]!, ...(m[3] ? ['to', m[3]] : []), 'table', m[4]!]);
  }
  for (const l of found.filter((x) => x.kind === 'route')) sh('ip', [`-${l.table}`, 'route', 'del', ...l.what.split(' ')]);
  for (const l of found.filter((x) => x.kind === 'interface')) sh('ip', ['link', 'del', l.what.split(' ')[0]!]);
  for (const l of found.filter((x) => x.kind === 'mount')) sh('umount', ['-l', l.what]);
  for (const l of found) {
    const path = l.what.split(' ')[0]!;
    if (l.kind === 'netns') {
      sh('umount', ['-l', path]);
      rmSync(path, { force: true });
    }
    if (l.kind === 'ipam' || l.kind === 'cache' || l.kind === 'record') rmSync(path, { force: true });
    if (l.kind === 'dir') {
      sh('umount', ['-l', join(path, 'shm')]);
      try {
        if (statSync(path).isDirectory()) rmSync(path, { recursive: true, force: true });
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Host processes whose command line mentions one of `needles` (a test's own temp dir, netns path or container id):
 * a runc exec, a conmon or an nsenter dialer left running. Not part of findLeftovers: a conmon lingers a moment
 * after its container is removed, so callers poll this until it is empty.
 */
export function processesMentioning(needles: string[]): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  if (needles.length === 0) return out;
  for (const d of list('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    const cmdline = read(`/proc/${d}/cmdline`).replace(/\0/g, ' ').trim();
    if (cmdline && needles.some((n) => cmdline.includes(n))) out.push({ pid: Number(d), cmdline });
  }
  return out;
}
