/**
 * One allocator for the host resources of tests that run at the same time (real vitest files in parallel workers,
 * Playwright workers): each lease is a slot of its own, and everything host-global a test names is derived from it —
 * an IPv4 /16 and an IPv6 /48 (so subnets, routes and iptables rules of two leases never overlap), a block of host
 * ports (portmap's DNAT rules and listeners never clash), and a name stem for bridges, veths, netns and temp dirs.
 *
 * Collision-free across processes: a slot is a file created with O_EXCL in a registry under /run (tmpfs: empty after a
 * reboot), holding the owner's pid. A lease is released when its test tears down, and every lease of a process when
 * it exits (a failed or interrupted test included). A worker that was SIGKILLed leaves its file; a slot whose owner is
 * dead is reclaimed only by `reclaimStaleLeases`, called from the one process that starts the workers (global setup),
 * never by two workers racing for it.
 *
 * The slot space: IPv4 second octets 130..169 (nothing in tests, e2e, bench or scripts picks those by hand; 10.88.x
 * stays containerd's and critest's), host ports 10000.. below the kernel's ephemeral range (32768..60999) so no outgoing connection takes one.
 */
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LEASE_DIR = process.env.PODSCOPE_TEST_LEASE_DIR ?? '/run/podscope-test-leases';
const FIRST_OCTET = 130;
export const SLOTS = 40;
const PORT_BASE = 10_000;
export const PORTS_PER_LEASE = 50;

export interface HostLease {
  readonly slot: number;
  /** the lease's IPv4 /16 is 10.<octet>.0.0/16 and its IPv6 /48 fd00:<octet>::/48 */
  readonly octet: number;
  /** the n-th /24 of the lease (n in 0..255): 10.<octet>.<n>.0/24 */
  subnet4(n?: number): string;
  /** the n-th /64 of the lease: fd00:<octet>:<n>::/64 */
  subnet6(n?: number): string;
  /** the lease's whole IPv4 range, 10.<octet>.0.0/16 (a route covering every subnet4) */
  readonly range4: string;
  /** the i-th host port of the lease (i in 0..PORTS_PER_LEASE-1) */
  port(i?: number): number;
  /** a name of at most 15 characters (IFNAMSIZ-1) unique to the lease: bridges, veths, netns, network names */
  name(tag: string): string;
  release(): void;
}

const held = new Set<number>();
let exitHookInstalled = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function slotFile(slot: number): string {
  return join(LEASE_DIR, String(slot));
}

function releaseSlot(slot: number): void {
  if (!held.delete(slot)) return;
  try {
    unlinkSync(slotFile(slot));
  } catch {
    /* already gone */
  }
}

/** Takes the first free slot; throws when all are held (more parallel tests than slots: a configuration error). */
export function leaseHost(owner = 'test'): HostLease {
  mkdirSync(LEASE_DIR, { recursive: true });
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const s of [...held]) releaseSlot(s);
    });
  }
  for (let slot = 0; slot < SLOTS; slot++) {
    if (held.has(slot)) continue;
    try {
      writeFileSync(slotFile(slot), `${process.pid} ${owner}\n`, { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw e;
    }
    held.add(slot);
    return makeLease(slot);
  }
  throw new Error(`leaseHost: all ${SLOTS} slots in ${LEASE_DIR} are held (${describeLeases().join('; ')})`);
}

function makeLease(slot: number): HostLease {
  const octet = FIRST_OCTET + slot;
  const stem = `pz${slot.toString(36)}`;
  return {
    slot,
    octet,
    range4: `10.${octet}.0.0/16`,
    subnet4: (n = 0) => `10.${octet}.${n}.0/24`,
    // n = 0 is fd00:<octet>::/64, as the kernel and the plugins print it
    subnet6: (n = 0) => (n === 0 ? `fd00:${octet}::/64` : `fd00:${octet}:${n.toString(16)}::/64`),
    port(i = 0) {
      if (i < 0 || i >= PORTS_PER_LEASE) throw new Error(`lease port index ${i} out of 0..${PORTS_PER_LEASE - 1}`);
      return PORT_BASE + slot * PORTS_PER_LEASE + i;
    },
    name(tag: string) {
      const n = `${stem}${tag}`;
      if (n.length > 15) throw new Error(`lease name ${n} is longer than 15 characters (tag ${tag})`);
      return n;
    },
    release: () => releaseSlot(slot),
  };
}

function describeLeases(): string[] {
  try {
    return readdirSync(LEASE_DIR).map((f) => `${f}: ${readFileSync(join(LEASE_DIR, f), 'utf8').trim()}`);
  } catch {
    return [];
  }
}

/**
 * Removes the slots whose owner process is gone. Only for the single process that starts the test workers (before
 * and after the run): a worker never takes over a slot, so two of them cannot both think a stale slot is theirs.
 */
export function reclaimStaleLeases(): string[] {
  const reclaimed: string[] = [];
  let files: string[] = [];
  try {
    files = readdirSync(LEASE_DIR);
  } catch {
    return reclaimed;
  }
  for (const f of files) {
    const path = join(LEASE_DIR, f);
    let pid = NaN;
    try {
      pid = Number(readFileSync(path, 'utf8').split(' ')[0]);
    } catch {
      continue;
    }
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) continue;
    try {
      unlinkSync(path);
      reclaimed.push(f);
    } catch {
      /* someone else reclaimed it */
    }
  }
  return reclaimed;
}
