/**
 * `npm run bench`: N sequential and M concurrent sandboxes on bridge + host-local (IPv4+IPv6) + portmap + bandwidth,
 * timing run/status/stop/remove and splitting each verb into its steps (from the engine's own trace), beside the floor.
 */
import type { ContainerEvent } from '../shared/domain/container';
import type { SandboxEvent } from '../shared/domain/sandbox';
import { createRealEnv, conflist } from '../testkit/throwaway-env';
import { measureFloorOnce } from './floor';
import { fmt, percentile, row, Samples } from './stats';

export interface BenchOptions {
  sequential: number;
  concurrent: number;
  out?: (line: string) => void;
}

const VERBS = ['run', 'status', 'stop', 'remove'] as const;

/**
 * The plugins' share of a run and a stop, measured alone (no engine): the steps that must follow one another
 * whatever a runtime overlaps. A run cannot end before the netns exists and the main network's chain has run ADD
 * plugin after plugin (each gets the previous one's result); the loopback network and the pause container can run
 * beside it. A stop cannot end before the chain has run DEL in reverse order and the netns is gone.
 */
export interface CriticalFloor {
  run: number;
  stop: number;
}

const RUN_CRITICAL = ['netns create', 'ADD bridge', 'ADD portmap', 'ADD bandwidth'];
const STOP_CRITICAL = ['DEL bandwidth', 'DEL portmap', 'DEL bridge', 'netns remove'];

export async function runSandboxBench(opts: BenchOptions): Promise<CriticalFloor> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const env = await createRealEnv({ tag: 'bench', subnet: 235 });
  const hostPortBase = 31000;
  try {
    // No probe after each run: it is a measurement of its own (Node agents in the pod's netns) that would compete
    // with the next verb for the two cores, as `podscope cri` does not run it either (cri.ts criEngineOptions).
    const engine = await env.engine({ probeOnReady: false });
    const verbs = new Samples();
    const steps = new Samples();
    engine.subscribe((e: SandboxEvent | ContainerEvent) => {
      if (e.type !== 'sandbox.progress') return;
      const t = e.entry;
      if (t.step === 'cni.network' || t.step === 'cni.setup' || t.step === 'cni.teardown') return; // aggregates of the plugin rows
      const what = t.plugin ? `${t.plugin.verb} ${t.plugin.type}` : t.step;
      steps.add(`${t.phase.padEnd(6)} ${what}`, t.durationMs);
    });
    const timed = async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const v = await fn();
      verbs.add(key, performance.now() - t0);
      return v;
    };
    const config = (i: number) => ({
      metadata: { name: `bench-${i}`, namespace: 'bench', uid: `bench-${i}` },
      port_mappings: [
        { container_port: 80, host_port: hostPortBase + i },
        { container_port: 443, host_port: hostPortBase + 1000 + i },
      ],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
    });

    out(
      `# Podscope sandbox bench: ${opts.sequential} sequential, ${opts.concurrent} concurrent; conflist bridge + host-local(v4+v6) + portmap(2 mappings) + bandwidth`,
    );
    for (let i = 0; i < opts.sequential; i++) {
      const { id } = await timed('run', () => engine.run({ config: config(i) }));
      await timed('status', () => engine.status(id));
      await timed('stop', () => engine.stop(id));
      await timed('remove', () => engine.remove(id));
    }

    const wall0 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: opts.concurrent }, (_, i) =>
        timedInto(verbs, 'run (concurrent)', () => engine.run({ config: config(500 + i) })),
      ),
    );
    const runWall = performance.now() - wall0;
    const wall1 = performance.now();
    await Promise.all(ids.map(({ id }) => timedInto(verbs, 'remove (concurrent)', () => engine.remove(id))));
    const removeWall = performance.now() - wall1;

    const floor = new Samples();
    const spec = {
      dir: env.dir,
      conflist: conflist({ tag: 'bench', subnet: 235 }, env.ipamDir) as never,
      binDir: '/usr/lib/cni',
      hostPort: hostPortBase + 2000,
    };
    for (let i = 0; i < opts.sequential; i++) await measureFloorOnce(spec, i, floor);

    const w = [40, 9, 9];
    out('');
    out(row(['verb (ms)', 'p50', 'p95'], w));
    for (const k of [...VERBS, 'run (concurrent)', 'remove (concurrent)'])
      out(row([k, fmt(percentile(verbs.get(k), 50)), fmt(percentile(verbs.get(k), 95))], w));
    out(row([`wall: ${opts.concurrent} concurrent runs`, fmt(runWall), ''], w));
    out(row([`wall: ${opts.concurrent} concurrent removes`, fmt(removeWall), ''], w));

    out('');
    out(row(['engine step (ms)', 'p50', 'p95'], w));
    for (const k of steps.keys()) out(row([k, fmt(percentile(steps.get(k), 50)), fmt(percentile(steps.get(k), 95))], w));

    out('');
    out(row(['floor: raw exec (ms)', 'p50', 'p95'], w));
    let setup = 0;
    let teardown = 0;
    for (const k of floor.keys()) {
      const p50 = percentile(floor.get(k), 50);
      if (/^(netns create|ADD|runc run)/.test(k)) setup += p50;
      else teardown += p50;
      out(row([k, fmt(p50), fmt(percentile(floor.get(k), 95))], w));
    }
    out(row(['floor setup (sum of p50)', fmt(setup), ''], w));
    out(row(['floor teardown (sum of p50)', fmt(teardown), ''], w));
    out(row(['engine run p50 / floor setup', `${(percentile(verbs.get('run'), 50) / setup).toFixed(2)}x`, ''], w));
    const critical = {
      run: RUN_CRITICAL.reduce((n, k) => n + percentile(floor.get(k), 50), 0),
      stop: STOP_CRITICAL.reduce((n, k) => n + percentile(floor.get(k), 50), 0),
    };
    out(row(['critical path of a run (netns + ADD chain)', fmt(critical.run), ''], w));
    out(row(['critical path of a stop (DEL chain + netns)', fmt(critical.stop), ''], w));
    out(
      row(
        [
          'engine stop+remove p50 / floor teardown',
          `${((percentile(verbs.get('stop'), 50) + percentile(verbs.get('remove'), 50)) / teardown).toFixed(2)}x`,
          '',
        ],
        w,
      ),
    );
    return critical;
  } finally {
    await env.teardown();
  }
}

async function timedInto<T>(samples: Samples, key: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const v = await fn();
  samples.add(key, performance.now() - t0);
  return v;
}
