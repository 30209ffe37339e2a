import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './tests/setup/longest-first-sequencer.ts';

const TEST_RESOLV_CONF = new URL('./testkit/resolv.conf', import.meta.url).pathname;

/**
 * The CRI files that use only fakes (no netns, CNI, runc, containerd or registry): they need no root and share nothing
 * on the host, so they run in parallel with everything else.
 */
const CRI_FAKES = [
  'app-images-over-cri',
  'authority-shim-limits',
  'client',
  'container-events-lifecycle',
  'containers-over-fakes',
  'endpoint-socket-check',
  'endpoint-watch',
  'fuzz',
  'go-client-compat',
  'large-messages',
  'list-follower',
  'registry-and-status',
  'server-over-fakes',
  'socket-safety',
  'streaming-cli',
  'streaming-rpc',
  'untrusted-peers',
  'validate-before-acquire',
].map((f) => `tests/cri/${f}.test.ts`);

/**
 * Real files that run alone, beside the CPU-bound checks: the ones that look at the whole host. `podscope nodes` and
 * `--all-nodes` find every containerd of this workstation as a node (another file's containerd would be found and
 * measured too), and the read-only checks of another runtime's pods on the host compare the host's whole netfilter
 * state before and after; the scale bench's smoke run (the bench's own names and subnets); and the sweep of a killed
 * trace's rules (host-global: any other engine starting meanwhile sweeps them first). The other containerd files (the
 * fixture's own socket, dirs, bridge and lease; nothing of theirs is found unless something looks for every node) run
 * beside the other real files.
 */
const ALONE = [
  'tests/real/bench-smoke.test.ts',
  'tests/real/trace-sweep-real.test.ts',
  'tests/real/foreign-containerd.test.ts',
  'tests/real/nodes-discovery.test.ts',
  'tests/real/nodes-across.test.ts',
  'tests/real/nodes-probe-across.test.ts',
];

/** The renderer's component tests: a DOM (jsdom) and testing-library's set-up, which the other unit files do not pay for. */
const UI_IN_TS = ['renderer/src/lib/style-nonce.test.ts'];

/** The CPU-bound projects use every core: vitest's default leaves one free, which on this project's 2-core machines
 * meant one worker. */
const CPU_WORKERS = Number(process.env.PODSCOPE_UNIT_WORKERS ?? availableParallelism());

/** Files at once in the real group: a real file alone spends most of its time waiting on the kernel, runc and the
 * plugins, so several overlap their waits; beside Playwright the machine is then busy throughout (/proc/stat).
 * Clean-clone runs of npm test: 4 at once 492.7 s, 5 at once 448.8 s (the real files 354 → 307 s); 6 (beside four
 * Playwright workers, on a machine a helper was also using) made them slower (361 s, the trace file 195 s instead of
 * 58). PODSCOPE_REAL_WORKERS overrides. */
const REAL_WORKERS = Number(process.env.PODSCOPE_REAL_WORKERS ?? 5);

// "unit" runs anywhere (fakes only, fake CNI plugins as real executables, jsdom components). "cri" and "real" run
// together: "real" needs root and touches the host (netns, Debian's CNI plugins, runc, gRPC sockets); each of its
// files takes its bridge, subnets, host ports and names from one allocator (testkit/allocator.ts), so files never
// collide. "real-alone" runs after them, one file at a time.
const host = {
  environment: 'node' as const,
  // One module graph per worker, not per file (as "unit"): a fresh graph for each file (a new child process, gRPC,
  // protobuf and the engine imported again) cost about 1.4 CPU s per file, about a fifth of the project's CPU on a
  // 2-core machine. No real or CRI file mocks modules or changes process.env; each one's host resources are its
  // lease's, released in its own teardown.
  isolate: false,
  testTimeout: 120000,
  hookTimeout: 120000,
  globalSetup: ['tests/setup/real-global.ts'],
  setupFiles: ['tests/setup/cpu-profile.ts'],
  // the host-global cleanup (portmap's shared chains, cgroup parents) is the global setup's, once, at the end
  // and pods without dns_config get a resolv.conf with no nameserver: no probe sends DNS off this host (testkit/resolv.conf)
  env: { PODSCOPE_HOST_SHARED: '1', PODSCOPE_RESOLV_CONF: TEST_RESOLV_CONF },
};
export default defineConfig({
  test: {
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache, keyed by content): npm test starts four
    // vitest runs (unit + ui, cri, real-alone, real) that import the same engine, shared and test kit files; each run
    // after the first reads them instead of transforming them again (the CRI files over fakes: 39.6 → 32.6 CPU s)
    experimental: { fsModuleCache: true },
    // the longest files start first, in whichever project of a group (tests/setup/longest-first-sequencer.ts)
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts', 'tests/protocol/**/*.test.ts', 'renderer/src/**/*.test.ts', 'electron/**/*.test.ts'],
          exclude: UI_IN_TS,
          environment: 'node',
          testTimeout: 20000,
          maxWorkers: CPU_WORKERS,
          setupFiles: ['tests/setup/cpu-profile.ts'],
          // the node files share one module graph per worker: importing the engine anew for each file was most of the
          // project's time (import 131 s of 279 s with isolation). No file relies on fresh module state.
          isolate: false,
          // a group of its own (projects that run together share their group's worker count)
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'ui',
          include: ['renderer/src/**/*.test.tsx', ...UI_IN_TS],
          environment: 'jsdom',
          setupFiles: ['tests/setup/cpu-profile.ts', 'tests/setup/testing-library.ts'],
          testTimeout: 20000,
          maxWorkers: CPU_WORKERS,
          // one module graph per worker, as "unit"; the UI stores are put back to their initial state for each file
          // (the set-up file), and each file still gets a DOM of its own
          isolate: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'cri',
          include: CRI_FAKES,
          environment: 'node',
          isolate: false,
          setupFiles: ['tests/setup/cpu-profile.ts'],
          testTimeout: 120000,
          hookTimeout: 120000,
          maxWorkers: REAL_WORKERS,
        },
      },
      {
        test: {
          name: 'real',
          include: ['tests/real/**/*.test.ts', 'tests/cri/**/*.test.ts'],
          exclude: [...CRI_FAKES, ...ALONE],
          ...host,
          maxWorkers: REAL_WORKERS,
        },
      },
      {
        test: {
          name: 'real-alone',
          include: ALONE,
          ...host,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
