/**
 * `npm run bench`, in one run: (1) the engine in process, N sequential and M concurrent sandboxes on the real host
 * (own temp dirs, bridge psc-bench, 10.235.0.0/24 + fd00:235::/64), p50/p95 per verb and per step beside the floor
 * (the same external commands back to back without the engine); (2) the same lifecycle over CRI side by side with
 * a containerd started for the run, plus M concurrent runs and removes; (3) container create+start, stop and remove
 * per runtime handler (runc, crun) beside containerd, with the monitor RSS per running container
 * (runtime-handlers.ts); (4) Status and List at each --scale size on both runtimes, with RSS; (5) the reads against
 * the Version RPC on the same socket at each --floor size (real engine with host-network pods, and over the
 * touch-point fakes with a container per pod); (6) with --teardown N, N pods stopped and removed on each runtime
 * (--teardown-concurrency: pods at a time, a list runs one point each; with --teardown-network cni each pod has a
 * hostPort, and Podscope's portmap DEL times and CPU per pod are printed).
 * Needs root. Prints figures; asserts nothing.
 * Lives outside the product: it uses the test kit (throwaway env, containerd fixture).
 */
import { parseArgs } from 'node:util';
import type { CriticalFloor } from './sandbox-bench';

const HELP = `npm run bench -- [--sequential N] [--concurrent M] [--scale 20,250,1000] [--samples K]
                    [--floor 20,1000] [--teardown N] [--teardown-network host|cni] [--teardown-concurrency 10|1,4,10,20]
                    [--skip-engine] [--skip-side-by-side] [--skip-scale] [--skip-floor] [--skip-handlers]`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      sequential: { type: 'string', short: 'n' },
      concurrent: { type: 'string', short: 'm' },
      scale: { type: 'string' },
      samples: { type: 'string' },
      'skip-engine': { type: 'boolean' },
      'skip-side-by-side': { type: 'boolean' },
      'skip-scale': { type: 'boolean' },
      floor: { type: 'string' },
      'skip-floor': { type: 'boolean' },
      teardown: { type: 'string' },
      'teardown-network': { type: 'string' },
      'teardown-concurrency': { type: 'string' },
      'skip-handlers': { type: 'boolean' },
      // the default now; accepted so older invocations keep working
      'side-by-side': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const int = (k: 'sequential' | 'concurrent' | 'samples', d: number) => {
    const v = values[k] === undefined ? d : Number(values[k]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${k} must be a positive integer, not ${JSON.stringify(values[k])}`);
    return v;
  };
  const sizeList = (k: 'scale' | 'floor', d: string) => {
    const list = (values[k] ?? d).split(',').map((x) => Number(x.trim()));
    if (list.some((s) => !Number.isInteger(s) || s < 1))
      throw new Error(`--${k} must list positive integers, not ${JSON.stringify(values[k])}`);
    return list;
  };
  const sizes = sizeList('scale', '20,250,1000');
  const floorSizes = sizeList('floor', '20,1000');
  const teardownPods = values.teardown === undefined ? 0 : Number(values.teardown);
  if (!Number.isInteger(teardownPods) || teardownPods < 0)
    throw new Error(`--teardown must be a number of pods, not ${JSON.stringify(values.teardown)}`);
  const teardownNetwork = values['teardown-network'] ?? 'host';
  if (teardownNetwork !== 'host' && teardownNetwork !== 'cni')
    throw new Error(`--teardown-network must be host or cni, not ${JSON.stringify(teardownNetwork)}`);
  const teardownConcurrency = (values['teardown-concurrency'] ?? '10').split(',').map(Number);
  if (teardownConcurrency.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error(`--teardown-concurrency must list positive integers, not ${JSON.stringify(values['teardown-concurrency'])}`);
  const load = async () => (await import('./daemon')).loadAverage();
  process.stdout.write(
    `# podscope bench, load average ${await load()} (2 shared cores: compare ratios from one run, not absolute times)\n`,
  );
  let critical: CriticalFloor | undefined;
  if (!values['skip-engine']) {
    const { runSandboxBench } = await import('./sandbox-bench');
    critical = await runSandboxBench({ sequential: int('sequential', 20), concurrent: int('concurrent', 10) });
  }
  if (!values['skip-side-by-side']) {
    const { runCriSideBySide } = await import('./cri-side-by-side');
    process.stdout.write('\n');
    const sbs = await runCriSideBySide({ n: int('sequential', 20), concurrent: int('concurrent', 10) });
    if (critical) {
      // What the plugins alone leave for any runtime that runs them in the CNI order: a runtime with no cost of its
      // own still takes this long, so this is the lowest ratio the order allows (the plugins' time is the same for
      // both runtimes: the same binaries on the same conflist).
      const ctd = (op: string) => sbs.rows.find((r) => r.op === op)!.containerd.p50;
      process.stdout.write('\nplugins-only critical path / containerd p50 (the lowest ratio the CNI order allows)\n');
      for (const [op, floor] of [
        ['RunPodSandbox', critical.run],
        ['StopPodSandbox', critical.stop],
      ] as const)
        process.stdout.write(
          `${op.padEnd(18)} ${floor.toFixed(1).padStart(8)} ms / ${ctd(op).toFixed(1).padStart(8)} ms = ${(floor / ctd(op)).toFixed(2)}x\n`,
        );
    }
  }
  if (!values['skip-handlers']) {
    // container verbs on runc and crun beside containerd, and the memory of what watches each running container
    const { runRuntimeHandlerBench } = await import('./runtime-handlers');
    process.stdout.write('\n');
    await runRuntimeHandlerBench({ n: int('sequential', 20), k: 5 });
  }
  if (!values['skip-scale']) {
    const { runCriScale } = await import('./cri-scale');
    process.stdout.write('\n');
    const r = await runCriScale({ sizes, samples: int('samples', 30) });
    if (r.leftover.podscope !== 0 || r.leftover.containerd !== 0)
      throw new Error(`scale bench left pods behind: ${JSON.stringify(r.leftover)}`);
  }
  if (!values['skip-floor']) {
    const { runCriFloor } = await import('./cri-floor');
    process.stdout.write('\n');
    const rows = await runCriFloor({ sizes: floorSizes, samples: 10 * int('samples', 30) });
    process.stdout.write('reads / Version p50 on the same socket (target <= 1.10x)\n');
    for (const r of rows.filter((x) => x.op !== 'Version'))
      process.stdout.write(
        `${`${r.server} ${r.pods} pods ${r.op}`.padEnd(44)} ${r.ratio.toFixed(2)}x${r.floorRatio === undefined ? '' : ` (${r.floorRatio.toFixed(2)}x the floor)`}\n`,
      );
  }
  if (teardownPods > 0) {
    const { runTeardownBench } = await import('./teardown');
    process.stdout.write('\n');
    await runTeardownBench({ pods: teardownPods, network: teardownNetwork, concurrency: teardownConcurrency, containerd: true });
  }
  process.stdout.write(`\n# done, load average ${await load()}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
