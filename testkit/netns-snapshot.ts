/**
 * What a read-only measurement could leave behind in a network namespace or on a node, as text a test compares before
 * and after: netfilter (iptables, ip6tables, nft), the processes living in the netns, tracefs instances and libcni's
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

/** the command lines of the processes whose netns is the one at `netnsPath` */
export function processesIn(netnsPath: string): string[] {
  const ino = statSync(netnsPath).ino;
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readlinkSync(`/proc/${p}/ns/net`) === `net:[${ino}]`;
      } catch {
        return false;
      }
    })
    .map((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      } catch {
        return '';
      }
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
 * its rules and the tables it created), while the netns, which no other engine traces, is still compared whole. A
 * table it created counts only while it holds no rule: one that another engine's trace still has rules in is that
 * trace's to delete when it ends (whichever ends last deletes it), so it is not this trace's leftover. An empty one is
 * looked at again for up to 2 s first, since the other trace deletes it just after removing its rules.
 */
export function traceTablesOf(netnsPath: string, opts: { hostMarksOf?: number } = {}): string[] {
  const lines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('('))
      .map((l) => l.replace(/\[\d+:\d+\]/, '').replace(/counter packets \d+ bytes \d+/, 'counter'));
  const mark = opts.hostMarksOf === undefined ? undefined : new RegExp(`podscope-trace pid=${opts.hostMarksOf}\\b`);
  const host = (text: string) => lines(text).filter((l) => mark === undefined || mark.test(l));
  const saved = { ip: sh('iptables-save', ['-t', 'raw']), ip6: sh('ip6tables-save', ['-t', 'raw']) };
  const hostTable = (family: 'ip' | 'ip6') => {
    if (mark === undefined) return host(sh('nft', ['list', 'table', family, 'raw']));
    for (let look = 0; ; look++) {
      const table = host(sh('nft', ['list', 'table', family, 'raw']));
      // the first look uses the listing read for the rules; a look again reads it afresh
      const save = look === 0 ? saved[family] : sh(family === 'ip' ? 'iptables-save' : 'ip6tables-save', ['-t', 'raw']);
      const inUse = lines(save).some((l) => l.startsWith('-A '));
      if (table.length === 0 || inUse) return [];
      if (look >= 20) return table;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  };
  return [
    ...host(saved.ip),
    ...host(saved.ip6),
    ...hostTable('ip').map((l) => `nft ${l}`),
    ...hostTable('ip6').map((l) => `nft6 ${l}`),
    ...lines(inNetns(netnsPath, 'iptables-save', ['-t', 'raw'])).map((l) => `pod ${l}`),
    ...lines(inNetns(netnsPath, 'ip6tables-save', ['-t', 'raw'])).map((l) => `pod6 ${l}`),
    ...lines(inNetns(netnsPath, 'nft', ['list', 'ruleset'])).map((l) => `pod nft ${l}`),
    ...(mark === undefined ? lines(sh('nft', ['list', 'tables'])).filter((l) => / raw$/.test(l)) : []),
  ];
}
