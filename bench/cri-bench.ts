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

export interface BenchStats { n: number; p50: number; p95: number }
export interface BenchRow { op: BenchOp; podscope: BenchStats; containerd: BenchStats; ratioP50: number }
export interface BenchResult { n: number; rows: BenchRow[]; table: string }

export interface BenchOptions {
  podscopeSocket: string;
  containerdSocket: string;
  /** lifecycles per runtime */
  n: number;
  /** pod config for iteration i (default: a plain pod, no ports, no bandwidth) */
  config?: (i: number, runtime: 'podscope' | 'containerd') => PodSandboxConfigInput;
  /** where the table goes (default console.log); pass null to stay quiet */
  print?: ((line: string) => void) | null;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

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
  const { podSandboxId: id } = await timed(into.RunPodSandbox, () => conn.call((c) => c.runPodSandbox, { config: proto, runtimeHandler: '' }));
  try {
    await timed(into.PodSandboxStatus, () => conn.call((c) => c.podSandboxStatus, { podSandboxId: id, verbose: false }));
    await timed(into.ListPodSandbox, () => conn.call((c) => c.listPodSandbox, { filter: undefined }));
    await timed(into.StopPodSandbox, () => conn.call((c) => c.stopPodSandbox, { podSandboxId: id }));
  } finally {
    await timed(into.RemovePodSandbox, () => conn.call((c) => c.removePodSandbox, { podSandboxId: id }));
  }
}

const emptySamples = (): Record<BenchOp, number[]> => Object.fromEntries(BENCH_OPS.map((op) => [op, []])) as unknown as Record<BenchOp, number[]>;

export async function benchCriSideBySide(opts: BenchOptions): Promise<BenchResult> {
  const runtimes = { podscope: await connectCri(opts.podscopeSocket), containerd: await connectCri(opts.containerdSocket) };
  const samples = { podscope: emptySamples(), containerd: emptySamples() };
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const config = opts.config ?? ((i: number, runtime: string) => ({ metadata: { name: `bench-${i}`, namespace: 'podscope-bench', uid: `${runtime}-${tag}-${i}` } }));
  try {
    for (let i = 0; i < opts.n; i++) {
      // alternate who goes first so neither always runs on a warmer host
      const order = i % 2 === 0 ? (['podscope', 'containerd'] as const) : (['containerd', 'podscope'] as const);
      for (const r of order) await lifecycle(runtimes[r], config(i, r), samples[r]);
    }
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
  const lines = [
    `CRI side by side, n=${opts.n} lifecycles each (ms)  podscope=${runtimes.podscope.version.runtimeVersion}  containerd=${runtimes.containerd.version.runtimeVersion}`,
    `${'op'.padEnd(18)} ${'podscope p50'.padStart(13)} ${'p95'.padStart(8)} ${'containerd p50'.padStart(15)} ${'p95'.padStart(8)} ${'ratio p50'.padStart(10)}`,
    ...rows.map((r) => `${r.op.padEnd(18)} ${fmt(r.podscope.p50).padStart(13)} ${fmt(r.podscope.p95).padStart(8)} ${fmt(r.containerd.p50).padStart(15)} ${fmt(r.containerd.p95).padStart(8)} ${(Number.isFinite(r.ratioP50) ? `${r.ratioP50.toFixed(2)}x` : '-').padStart(10)}`),
  ];
  const table = lines.join('\n');
  if (opts.print !== null) (opts.print ?? console.log)(table);
  return { n: opts.n, rows, table };
}
