/**
 * Host leftovers a test run may create that no CNI DEL removes: the bridge (the bridge plugin never deletes it) and
 * portmap's shared nat chains (CNI-HOSTPORT-*, created on first use and kept by design). Tests snapshot what existed
 * before them and remove only what they added, and only when no pod's CNI-DN-* chain still needs the shared chains.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, rmdirSync } from 'node:fs';

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const SHARED_CHAINS = ['CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-SETMARK', 'CNI-HOSTPORT-MASQ'];
const JUMPS: Array<[string, string[]]> = [
  ['PREROUTING', ['-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'CNI-HOSTPORT-DNAT']],
  ['OUTPUT', ['-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'CNI-HOSTPORT-DNAT']],
  ['POSTROUTING', ['-m', 'comment', '--comment', 'CNI portfwd requiring masquerade', '-j', 'CNI-HOSTPORT-MASQ']],
];

function sh(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

export function natChains(): string[] {
  return sh('iptables', ['-t', 'nat', '-S']).split('\n').filter((l) => l.startsWith('-N ')).map((l) => l.slice(3));
}

export interface HostSnapshot { chains: Set<string> }

export function snapshotHost(): HostSnapshot {
  return { chains: new Set(natChains()) };
}

/** Deletes the bridges, the engine's now-empty cgroup parents and the shared portmap chains this test added. */
export function restoreHost(before: HostSnapshot, bridges: string[]): void {
  for (const b of bridges) sh('ip', ['link', 'del', b]);
  // runc leaves cgroupfs parent directories behind; rmdir only succeeds on an empty one, so a live sandbox is safe
  for (const controller of readdirSafe('/sys/fs/cgroup')) {
    try { rmdirSync(`/sys/fs/cgroup/${controller}/podscope`); } catch { /* absent or still in use */ }
  }
  const chains = natChains();
  if (chains.some((c) => c.startsWith('CNI-DN-'))) return; // a pod still uses portmap
  const added = SHARED_CHAINS.filter((c) => chains.includes(c) && !before.chains.has(c));
  if (added.length === 0) return;
  for (const [chain, spec] of JUMPS) {
    if (added.includes(spec[spec.length - 1]!)) sh('iptables', ['-t', 'nat', '-D', chain, ...spec]);
  }
  for (const c of added) sh('iptables', ['-t', 'nat', '-F', c]);
  for (const c of added) sh('iptables', ['-t', 'nat', '-X', c]);
}
