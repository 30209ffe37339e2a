/**
 * Reads on the real engine, as an independent client sees them: `podscope cri` (the bundle, in a process of its
 * own) on a throw-away env (the test kit's CNI conflist: bridge + host-local + portmap + bandwidth, on a lease of
 * testkit/allocator.ts), 20 real pods (a busybox pause container and a CNI network each), and a CRI client in this
 * process alternating plain and verbose PodSandboxStatus over the pods, beside ListPodSandbox and Version on the same
 * connection. Version asks nothing of the engine, so a read's ratio to it is what Podscope adds to the transport.
 * Ops rotate their order every sample, so a load spike on the shared host lands on each alike.
 * `npx tsx bench/cri-reads.ts [--pods 20] [--samples 400] [--cpu-prof DIR]` (root; hold the host lock).
 * Prints figures; asserts nothing. Everything it made (pods, bridge, lease, dirs) is removed, on failure too.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectCri, type CriConnection } from '../electron/cri/client/connection';
import * as pb from '../electron/cri/generated/runtime_v1';
import { createRealEnv } from '../testkit/throwaway-env';
import { loadAverage, pool, startCriDaemon, type CriDaemon } from './daemon';
import { percentile, row } from './stats';

export interface ReadsOptions {
  pods?: number;
  samples?: number;
  /** the server's V8 CPU profile goes here (node --cpu-prof) */
  cpuProfDir?: string;
  out?: (line: string) => void;
}

export interface ReadsRow {
  op: string;
  p50: number;
  p90: number;
  /** p50 against Version's p50 */
  ratio: number;
}

const podConfig = (i: number, tag: string) =>
  pb.PodSandboxConfig.fromPartial({
    metadata: { name: `reads-${i}`, namespace: 'podscope-reads', uid: `${tag}-${i}`, attempt: 0 },
    labels: { 'bench/pod': `p${i}` },
  });

export async function runCriReads(opts: ReadsOptions = {}): Promise<ReadsRow[]> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const count = opts.pods ?? 20;
  const samples = opts.samples ?? 400;
  const tag = Date.now().toString(36);
  const env = await createRealEnv({ tag: 'reads' });
  let daemon: CriDaemon | undefined;
  let conn: CriConnection | undefined;
  const pods: string[] = [];
  try {
    daemon = await startCriDaemon(env, { nodeArgs: opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [] });
    const c = (conn = await connectCri(daemon.socketPath));
    const made = await pool(
      Array.from({ length: count }, (_, i) => i),
      5,
      async (i) => (await c.call((x) => x.runPodSandbox, { config: podConfig(i, tag), runtimeHandler: '' })).podSandboxId,
    );
    pods.push(...made);
    // Status alternates plain and verbose, each over every pod in turn: no single record stays hot.
    let plainAt = 0;
    let verboseAt = 0;
    const ops: Array<[string, () => Promise<unknown>]> = [
      ['Version', () => c.call((x) => x.version, { version: '' })],
      ['PodSandboxStatus', () => c.call((x) => x.podSandboxStatus, { podSandboxId: pods[plainAt++ % count]!, verbose: false })],
      ['PodSandboxStatus verbose', () => c.call((x) => x.podSandboxStatus, { podSandboxId: pods[verboseAt++ % count]!, verbose: true })],
      ['ListPodSandbox', () => c.call((x) => x.listPodSandbox, { filter: undefined })],
    ];
    for (let w = 0; w < Math.min(100, samples); w++) for (const [, call] of ops) await call(); // JIT, caches
    const times = new Map<string, number[]>(ops.map(([name]) => [name, []]));
    for (let j = 0; j < samples; j++) {
      for (let o = 0; o < ops.length; o++) {
        const [name, call] = ops[(o + j) % ops.length]!;
        const t0 = performance.now();
        await call();
        times.get(name)!.push(performance.now() - t0);
      }
    }
    const version = percentile(times.get('Version')!, 50);
    const rows = ops.map(([op]): ReadsRow => {
      const t = times.get(op)!;
      const p50 = percentile(t, 50);
      return { op, p50, p90: percentile(t, 90), ratio: p50 / version };
    });
    const w = [26, 8, 8, 9];
    out(
      `# reads on the real engine: ${count} CNI pods, ${samples} samples per op, server in its own process (load ${await loadAverage()})`,
    );
    out(row(['op (ms)', 'p50', 'p90', '/Version'], w));
    for (const r of rows) out(row([r.op, r.p50.toFixed(3), r.p90.toFixed(3), `${r.ratio.toFixed(2)}x`], w));
    return rows;
  } finally {
    if (conn) {
      const c = conn;
      await pool(pods, 5, async (id) => {
        await c.call((x) => x.stopPodSandbox, { podSandboxId: id }).catch(() => undefined);
        await c.call((x) => x.removePodSandbox, { podSandboxId: id }).catch((e: unknown) => out(`remove ${id}: ${(e as Error).message}`));
      });
      c.close();
    }
    await daemon?.stop();
    // removes whatever a failed remove left, the bridge and the dirs, and releases the lease
    await env.teardown();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { pods: { type: 'string' }, samples: { type: 'string' }, 'cpu-prof': { type: 'string' } } });
  runCriReads({
    pods: Number(values.pods ?? 20),
    samples: Number(values.samples ?? 400),
    ...(values['cpu-prof'] && { cpuProfDir: values['cpu-prof'] }),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`cri-reads: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
