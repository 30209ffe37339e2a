/**
 * What a read-only measurement could leave behind in a network namespace or on a node, as text a test compares before
 * and after: netfilter (iptables, ip6tables, nft), the processes and threads living in the netns, tracefs instances and libcni's
 * cache entries of a pod. One reader for every "nothing changed" test of another runtime's pods and nodes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

const TRACEFS = ['/sys/kernel/tracing/instances', '/sys/kernel/debug/tracing/instances'];

/** a command's output, or a line naming its failure (a failure is compared like any output) */
export function sh(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return `(${file} failed: ${(e as Error).message.split('\n')[0]})`;
  }
}

/** a command run in the netns at `path` (the host's when undefined) */
export const inNetns = (path: string | undefined, file: string, args: string[]): string =>
  path === undefined ? sh(file, args) : sh('nsenter', [`--net=${path}`, file, ...args]);

/** rules without the dump's date comments */
const rules = (text: string) =>
  text
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .join('\n');

/** iptables and ip6tables (every table) and nft without counters (packets the measurement sent move them) */
export function netfilterOf(netnsPath?: string): { iptables: string; ip6tables: string; nft: string } {
  return {
    iptables: rules(inNetns(netnsPath, 'iptables-save', [])),
    ip6tables: rules(inNetns(netnsPath, 'ip6tables-save', [])),
    nft: inNetns(netnsPath, 'nft', ['-s', 'list', 'ruleset']),
  };
}

/** what `readlink /proc/<...>/ns/net` says, or undefined for a task that is gone or hidden */
function netOf(procDir: string): string | undefined {
  try {
    return readlinkSync(`${procDir}/ns/net`);
  } catch {
    return undefined;
  }
}

/** what lives in one netns: a process by its pid, or a thread by its tid (with its process's pid) */
export interface NetnsTask {
  id: number;
  pid: number;
  /** a thread whose process's main thread is in another netns (an agent thread entered it with setns) */
  thread: boolean;
}

/**
 * Every process whose main thread is in the netns at `netnsPath`, and every thread that is in it while its
 * process's main thread is not. /proc lists only processes (thread group leaders), and /proc/<pid>/ns/net is the
 * main thread's: a thread that entered a netns with setns (a probe agent thread) is seen only under
 * /proc/<pid>/task/<tid>/ns/net. A thread that shares its process's netns is counted with its process.
 */
export function tasksIn(netnsPath: string): NetnsTask[] {
  const want = `net:[${statSync(netnsPath).ino}]`;
  const out: NetnsTask[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const pid = Number(d);
    const leader = netOf(`/proc/${d}`);
    if (leader === undefined) continue;
    if (leader === want) {
      out.push({ id: pid, pid, thread: false });
      continue;
    }
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${d}/task`);
    } catch {
      continue;
    }
    for (const t of tids) if (t !== d && netOf(`/proc/${d}/task/${t}`) === want) out.push({ id: Number(t), pid, thread: true });
  }
  return out;
}

/** the command lines of what lives in the netns at `netnsPath` (tasksIn): a thread's as "thread of <its process's>" */
export function processesIn(netnsPath: string): string[] {
  return tasksIn(netnsPath)
    .map((t) => {
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${t.pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      } catch {
        // gone meanwhile
      }
      return t.thread ? `thread of ${cmdline}` : cmdline;
    })
    .sort();
}

/** the tracefs instances (a trace that leaks one leaves it here) */
export const tracefsInstances = (): Array<[string, string[]]> => TRACEFS.filter(existsSync).map((d) => [d, readdirSync(d).sort()]);

/** libcni's cache entries of one pod: name, content and mtime (a rewrite with the same content still shows) */
export function cniCacheOf(podId: string, dir = '/var/lib/cni/results'): Array<[string, string, number]> {
  return readdirSync(dir)
    .filter((n) => n.includes(podId))
    .map((n) => [n, readFileSync(`${dir}/${n}`, 'utf8'), statSync(`${dir}/${n}`).mtimeMs]);
}

/**
 * The raw tables (v4, v6) a trace touches, as iptables-save and nft print them, counters left out (traffic moves
 * them): the host's and the netns's, the netns's whole nft ruleset and the host's list of raw tables. A trace leaves
 * them as it found them.
 *
 * `hostMarksOf`: for a file that runs beside other engines, whose traces add and remove their own rules and raw tables
 * on the host meanwhile — the host's part is then only what carries this engine's mark (`podscope-trace pid=<pid>`:
 * its rules and the tables it created), while the netns, which no other engine traces, is still compared whole.
 */
export function traceTablesOf(netnsPath: string, opts: { hostMarksOf?: number } = {}): string[] {
  const lines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('('))
      .map((l) => l.replace(/\[\d+:\d+\]/, '').replace(/counter packets \d+ bytes \d+/, 'counter'));
  const mark = opts.hostMarksOf === undefined ? undefined : new RegExp(`podscope-trace pid=${opts.hostMarksOf}\\b`);
  const host = (text: string) => lines(text).filter((l) => mark === undefined || mark.test(l));
  return [
    ...host(sh('iptables-save', ['-t', 'raw'])),
    ...host(sh('ip6tables-save', ['-t', 'raw'])),
    ...host(sh('nft', ['list', 'table', 'ip', 'raw'])).map((l) => `nft ${l}`),
    ...host(sh('nft', ['list', 'table', 'ip6', 'raw'])).map((l) => `nft6 ${l}`),
    ...lines(inNetns(netnsPath, 'iptables-save', ['-t', 'raw'])).map((l) => `pod ${l}`),
    ...lines(inNetns(netnsPath, 'ip6tables-save', ['-t', 'raw'])).map((l) => `pod6 ${l}`),
    ...lines(inNetns(netnsPath, 'nft', ['list', 'ruleset'])).map((l) => `pod nft ${l}`),
    ...(mark === undefined ? lines(sh('nft', ['list', 'tables'])).filter((l) => / raw$/.test(l)) : []),
  ];
}
