/**
 * Host leftovers a test run may create that no CNI DEL removes: the bridge (the bridge plugin never deletes it),
 * runc's cgroupfs parents, and portmap's shared nat chains (CNI-HOSTPORT-*, created on first use and kept by design,
 * in iptables and, for IPv6 mappings, ip6tables). Tests snapshot what existed before them and remove only what they
 * added, and only when no pod's CNI-DN-* chain still needs the shared chains. One implementation for every test
 * fixture (engine, CNI layer, containerd, e2e) and the bench.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, rmdirSync } from 'node:fs';

const SHARED_CHAINS = ['CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-SETMARK', 'CNI-HOSTPORT-MASQ'];
const TABLES = ['iptables', 'ip6tables'] as const;
type Table = (typeof TABLES)[number];

function sh(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const natRules = (table: Table) => sh(table, ['-t', 'nat', '-S']).split('\n').filter(Boolean);

export function natChains(table: Table = 'iptables'): string[] {
  return natRules(table)
    .filter((l) => l.startsWith('-N '))
    .map((l) => l.slice(3));
}

export interface HostSnapshot {
  chains: Record<Table, Set<string>>;
}

/**
 * The host's netfilter raw tables (`ip raw`, `ip6 raw`), each with its whole listing. Nothing in the suite keeps one:
 * a trace creates its own and deletes it, and a test that plants rules there removes what it made. One that is here
 * after the suite and was not before is a leak (two runs left `ip raw` and `ip6 raw` with one empty chain each,
 * and the next run's killed-trace test then failed on them), so `npm test` compares them around everything
 * (scripts/shared-host.ts).
 */
export function hostRawTables(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const family of ['ip', 'ip6']) {
    const listing = sh('nft', ['list', 'table', family, 'raw']);
    if (listing) out[family] = listing;
  }
  return out;
}

export function snapshotHost(): HostSnapshot {
  return { chains: { iptables: new Set(natChains('iptables')), ip6tables: new Set(natChains('ip6tables')) } };
}

/**
 * Set (to 1) where test files run in parallel on one host (the real vitest project, Playwright workers): then the
 * host-global part of the cleanup — portmap's shared chains and the cgroup parents — is not for one file to do (its
 * check "no pod uses portmap now" can race with another file's portmap ADD between creating the chain and its
 * CNI-DN-* chain). The process that started the files does it once at the end (`restoreSharedHost`).
 */
export const SHARED_HOST_ENV = 'PODSCOPE_HOST_SHARED';

/**
 * Set (to 1) by `npm test` (scripts/run-tests.mjs), which runs several of those runs at once (the real files beside
 * Playwright): then neither run's global setup nor teardown touches the host-global state (stale allocator slots,
 * portmap's shared chains, cgroup parents); `npm test` does it once around all of them (scripts/shared-host.ts).
 */
export const SHARED_HOST_OUTER_ENV = 'PODSCOPE_HOST_SHARED_OUTER';
export const sharedHostOuter = (): boolean => process.env[SHARED_HOST_OUTER_ENV] === '1';
const hostShared = () => process.env[SHARED_HOST_ENV] === '1';

/** Deletes the bridges, the engine's now-empty cgroup parents and the shared portmap chains added since `before`. */
export function restoreHost(before: HostSnapshot, bridges: string[]): void {
  for (const b of bridges) sh('ip', ['link', 'del', b]);
  if (hostShared()) return;
  restoreSharedHost(before);
}

/** The host-global part of `restoreHost`: the engine's empty cgroup parents and the shared chains added since `before`. */
export function restoreSharedHost(before: HostSnapshot): void {
  // runc leaves cgroupfs parent directories behind; rmdir only succeeds on an empty one, so a live sandbox is safe
  for (const controller of readdirSafe('/sys/fs/cgroup')) {
    try {
      rmdirSync(`/sys/fs/cgroup/${controller}/podscope`);
    } catch {
      /* absent or still in use */
    }
  }
  for (const table of TABLES) removeAddedSharedChains(table, before.chains[table]);
}

function removeAddedSharedChains(table: Table, before: Set<string>): void {
  const rules = natRules(table);
  const chains = rules.filter((l) => l.startsWith('-N ')).map((l) => l.slice(3));
  if (chains.some((c) => c.startsWith('CNI-DN-'))) return; // a pod (ours or not) still uses portmap
  const added = SHARED_CHAINS.filter((c) => chains.includes(c) && !before.has(c));
  if (added.length === 0) return;
  // every rule elsewhere that jumps into an added chain, deleted by its own spec (iptables -S quotes comments)
  for (const rule of rules.filter(
    (l) => l.startsWith('-A ') && added.some((c) => l.endsWith(`-j ${c}`)) && !added.some((c) => l.startsWith(`-A ${c} `)),
  )) {
    const argv = [...rule.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    sh(table, ['-t', 'nat', '-D', ...argv.slice(1)]);
  }
  for (const c of added) sh(table, ['-t', 'nat', '-F', c]);
  for (const c of added) sh(table, ['-t', 'nat', '-X', c]);
}
