/**
 * The host-global part of a test run's cleanup, for `npm test`, which runs the real files and Playwright side by side:
 * each run's own global teardown would remove portmap's shared chains while the other still adds pods (see
 * testkit/host-cleanup.ts), and two global setups reclaiming stale allocator slots at once could free a slot a worker
 * has just taken. So `npm test` does both once, around everything, and tells the runs so (SHARED_HOST_OUTER_ENV).
 *
 *   tsx scripts/shared-host.ts begin <file>   reclaim stale slots, write the shared chains that exist now to <file>
 *   tsx scripts/shared-host.ts end <file>     remove what was added since <file> (and empty cgroup parents), reclaim
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { reclaimStaleLeases } from '../testkit/allocator';
import { hostRawTables, restoreSharedHost, snapshotHost, type HostSnapshot } from '../testkit/host-cleanup';

const [verb, file] = process.argv.slice(2);
if (!file || (verb !== 'begin' && verb !== 'end')) {
  console.error('usage: shared-host.ts begin|end <snapshot file>');
  process.exit(2);
}
if (process.getuid?.() !== 0) process.exit(0);
if (verb === 'begin') {
  reclaimStaleLeases();
  const { chains } = snapshotHost();
  writeFileSync(
    file,
    JSON.stringify({ iptables: [...chains.iptables], ip6tables: [...chains.ip6tables], rawTables: Object.keys(hostRawTables()) }),
  );
} else {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<'iptables' | 'ip6tables' | 'rawTables', string[]>;
  const before: HostSnapshot = { chains: { iptables: new Set(saved.iptables), ip6tables: new Set(saved.ip6tables) } };
  restoreSharedHost(before);
  reclaimStaleLeases();
  rmSync(file, { force: true });
  // reported, not deleted: what made it is the bug, and its listing says which test to look at
  const left = Object.entries(hostRawTables()).filter(([family]) => !(saved.rawTables ?? []).includes(family));
  for (const [family, listing] of left)
    console.error(`host end: the host's ${family} raw table was made during the run and is still there:\n${listing}`);
  if (left.length > 0) process.exit(1);
}
