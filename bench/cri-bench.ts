/**
 * Side-by-side CRI latency: the same sandbox lifecycle (RunPodSandbox → PodSandboxStatus → ListPodSandbox →
 * StopPodSandbox → RemovePodSandbox) against a Podscope socket and a containerd socket, alternating runtimes per
 * iteration so both see the same host conditions. Times are of the raw gRPC calls (no client-side decoding).
 * Prints p50/p95 per op for each and the p50 ratio (Podscope / containerd).
 */
import { PodSandboxConfigSchema, type PodSandboxConfigInput } from '../shared/domain/config';
import { configToProto } from '../electron/cri/convert/config';
import { connectCri, type CriConnection } from '../electron/cri/client/connection';

export const BENCH_OPS = ['RunPodSandbox', 'PodSandboxStatus', 'ListPodSandbox', 'StopPodSandbox', 'RemovePodSandbox'] as const;
export type BenchOp = (typeof BENCH_OPS)[number];

export interface BenchStats {
  n: number;
  p50: number;
  p95: number;
}
export interface BenchRow {
  op: BenchOp;
  podscope: BenchStats;
  containerd: BenchStats;
  ratioP50: number;
}
export interface ConcurrentStats {
  wall: number;
  p50: number;
  duplicateIps: string[];
}
export interface ConcurrentRow {
  op: 'RunPodSandbox x' | 'RemovePodSandbox x';
  podscope: ConcurrentStats;
  containerd: ConcurrentStats;
}
export interface BenchResult {
  n: number;
  rows: BenchRow[];
  concurrent: ConcurrentRow[];
  table: string;
}

export interface BenchOptions {
  podscopeSocket: string;
  containerdSocket: string;
  /** lifecycles per runtime */
  n: number;
  /** pod config for iteration i (default: a plain pod, no ports, no bandwidth) */
  config?: (i: number, runtime: 'podscope' | 'containerd') => PodSandboxConfigInput;
  /** sandboxes run (then removed) at once per runtime after the sequential lifecycles (default 0: none) */
  concurrent?: number;
  /** where the table goes (default console.log); pass null to stay quiet */
  print?: ((line: string) => void) | null;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

function stats(samples: number[]): BenchStats {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95) };
}

async function timed<T>(samples: number[], fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const r = await fn();
  samples.push(performance.now() - t0);
  return r;
}

async function lifecycle(conn: CriConnection, config: PodSandboxConfigInput, into: Record<BenchOp, number[]>): Promise<void> {
  const proto = configToProto(PodSandboxConfigSchema.parse(config));
  const { podSandboxId: id } = await timed(into.RunPodSandbox, () =>
    conn.call((c) => c.runPodSandbox, { config: proto, runtimeHandler: '' }),
  );
  try {
    await timed(into.PodSandboxStatus, () => conn.call((c) => c.podSandboxStatus, { podSandboxId: id, verbose: false }));
    await timed(into.ListPodSandbox, () => conn.call((c) => c.listPodSandbox, { filter: undefined }));
    await timed(into.StopPodSandbox, () => conn.call((c) => c.stopPodSandbox, { podSandboxId: id }));
  } finally {
    await timed(into.RemovePodSandbox, () => conn.call((c) => c.removePodSandbox, { podSandboxId: id }));
  }
}

const emptySamples = (): Record<BenchOp, number[]> =>
  Object.fromEntries(BENCH_OPS.map((op) => [op, []])) as unknown as Record<BenchOp, number[]>;

export async function benchCriSideBySide(opts: BenchOptions): Promise<BenchResult> {
  const runtimes = { podscope: await connectCri(opts.podscopeSocket), containerd: await connectCri(opts.containerdSocket) };
  const samples = { podscope: emptySamples(), containerd: emptySamples() };
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const config =
    opts.config ??
    ((i: number, runtime: string) => ({ metadata: { name: `bench-${i}`, namespace: 'podscope-bench', uid: `${runtime}-${tag}-${i}` } }));
  const m = opts.concurrent ?? 0;
  const burst: Record<'podscope' | 'containerd', { run?: ConcurrentStats; remove?: ConcurrentStats }> = { podscope: {}, containerd: {} };
  try {
    for (let i = 0; i < opts.n; i++) {
      // alternate who goes first so neither always runs on a warmer host
      const order = i % 2 === 0 ? (['podscope', 'containerd'] as const) : (['containerd', 'podscope'] as const);
      for (const r of order) await lifecycle(runtimes[r], config(i, r), samples[r]);
    }
    if (m > 0)
      for (const r of ['podscope', 'containerd'] as const)
        burst[r] = await concurrentRunRemove(runtimes[r], m, (i) => config(opts.n + 500 + i, r));
  } finally {
    runtimes.podscope.close();
    runtimes.containerd.close();
  }
  const rows: BenchRow[] = BENCH_OPS.map((op) => {
    const p = stats(samples.podscope[op]);
    const c = stats(samples.containerd[op]);
    return { op, podscope: p, containerd: c, ratioP50: p.p50 / c.p50 };
  });
  const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  const concurrent: ConcurrentRow[] = [];
  if (m > 0) {
    concurrent.push({ op: 'RunPodSandbox x', podscope: burst.podscope.run!, containerd: burst.containerd.run! });
    concurrent.push({ op: 'RemovePodSandbox x', podscope: burst.podscope.remove!, containerd: burst.containerd.remove! });
  }
  const lines = [
    `CRI side by side, n=${opts.n} lifecycles each (ms)  podscope=${runtimes.podscope.version.runtimeVersion}  containerd=${runtimes.containerd.version.runtimeVersion}`,
    `${'op'.padEnd(18)} ${'podscope p50'.padStart(13)} ${'p95'.padStart(8)} ${'containerd p50'.padStart(15)} ${'p95'.padStart(8)} ${'ratio p50'.padStart(10)}`,
    ...rows.map(
      (r) =>
        `${r.op.padEnd(18)} ${fmt(r.podscope.p50).padStart(13)} ${fmt(r.podscope.p95).padStart(8)} ${fmt(r.containerd.p50).padStart(15)} ${fmt(r.containerd.p95).padStart(8)} ${(Number.isFinite(r.ratioP50) ? `${r.ratioP50.toFixed(2)}x` : '-').padStart(10)}`,
    ),
  ];
  if (m > 0) {
    lines.push(
      '',
      `${m} at once (ms)       ${'podscope wall'.padStart(13)} ${'p50'.padStart(8)} ${'containerd wall'.padStart(15)} ${'p50'.padStart(8)} ${'ratio wall'.padStart(10)}`,
    );
    for (const c of concurrent) {
      lines.push(
        `${`${c.op}${m}`.padEnd(18)} ${fmt(c.podscope.wall).padStart(13)} ${fmt(c.podscope.p50).padStart(8)} ${fmt(c.containerd.wall).padStart(15)} ${fmt(c.containerd.p50).padStart(8)} ${`${(c.podscope.wall / c.containerd.wall).toFixed(2)}x`.padStart(10)}`,
      );
    }
    const dups = [...burst.podscope.run!.duplicateIps, ...burst.containerd.run!.duplicateIps];
    lines.push(
      dups.length === 0
        ? `no duplicate pod IP among the ${m} concurrent sandboxes of either runtime`
        : `DUPLICATE pod IPs: ${dups.join(', ')}`,
    );
  }
  const table = lines.join('\n');
  if (opts.print !== null) (opts.print ?? console.log)(table);
  return { n: opts.n, rows, concurrent, table };
}

/** m RunPodSandbox at once (wall and p50), their IPs checked for duplicates, then m RemovePodSandbox at once. */
async function concurrentRunRemove(
  conn: CriConnection,
  m: number,
  config: (i: number) => PodSandboxConfigInput,
): Promise<{ run: ConcurrentStats; remove: ConcurrentStats }> {
  const runSamples: number[] = [];
  const t0 = performance.now();
  const settled = await Promise.allSettled(
    Array.from({ length: m }, (_, i) =>
      timed(runSamples, () =>
        conn.call((c) => c.runPodSandbox, { config: configToProto(PodSandboxConfigSchema.parse(config(i))), runtimeHandler: '' }),
      ),
    ),
  );
  const runWall = performance.now() - t0;
  const ids = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.podSandboxId] : []));
  const removeSamples: number[] = [];
  let removeWall = NaN;
  const seen = new Map<string, string>();
  const duplicateIps: string[] = [];
  try {
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    for (const id of ids) {
      const st = await conn.call((c) => c.podSandboxStatus, { podSandboxId: id, verbose: false });
      for (const ip of [st.status?.network?.ip ?? '', ...(st.status?.network?.additionalIps ?? []).map((a) => a.ip)].filter(Boolean)) {
        if (seen.has(ip)) duplicateIps.push(`${ip} (${seen.get(ip)} and ${id})`);
        seen.set(ip, id);
      }
    }
  } finally {
    const t1 = performance.now();
    await Promise.all(ids.map((id) => timed(removeSamples, () => conn.call((c) => c.removePodSandbox, { podSandboxId: id }))));
    removeWall = performance.now() - t1;
  }
  return {
    run: { wall: runWall, p50: stats(runSamples).p50, duplicateIps },
    remove: { wall: removeWall, p50: stats(removeSamples).p50, duplicateIps: [] },
  };
}
