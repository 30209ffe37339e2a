/**
 * Status and List at scale, side by side: N live pods on `podscope cri` and on a containerd started for the run, then
 * PodSandboxStatus and ListPodSandbox (unfiltered, filtered by id, filtered by a label one pod carries) timed over
 * the same CRI client, alternating runtimes per sample. Pods are host-network (no CNI plugin runs on either side),
 * so 1,000 of them are a pause container each and nothing else; created 10 at a time and all removed at the end.
 * Prints p50/p95 per op and size, the ratio, the p50 at each size over the p50 at the smallest, and RSS.
 */
import { PodSandboxConfigSchema } from '../shared/domain/config';
import { configToProto } from '../electron/cri/convert/config';
import { connectCri, type CriConnection } from '../electron/cri/client/connection';
import type * as pb from '../electron/cri/generated/runtime_v1';
import { createRealEnv } from '../testkit/throwaway-env';
import { startContainerd } from '../testkit/containerd-fixture';
import { loadAverage, pool, rssMiB, startCriDaemon } from './daemon';
import { fmt, percentile, row } from './stats';

export interface ScaleOptions {
  sizes: number[];
  /** timed calls per op, runtime and size */
  samples?: number;
  concurrency?: number;
  out?: (line: string) => void;
}

export interface ScaleResult {
  /** what was left after teardown, per runtime (0 when clean) */
  leftover: { podscope: number; containerd: number };
  sizes: number[];
}

/** Version asks nothing of the engine: its ratio is the transport's (grpc-js against grpc-go), the floor of the rest */
const OPS = ['Version', 'Status', 'Status verbose', 'List', 'List id=', 'List label='] as const;
type Op = (typeof OPS)[number];
type Runtime = 'podscope' | 'containerd';

const HOST_NETWORK = 2; // NamespaceMode.NODE

function podConfig(i: number, runtime: Runtime, tag: string): pb.PodSandboxConfig {
  return configToProto(
    PodSandboxConfigSchema.parse({
      metadata: { name: `scale-${i}`, namespace: 'podscope-scale', uid: `${runtime}-${tag}-${i}` },
      labels: { 'bench/pod': `p${i}`, 'bench/group': `g${i % 10}` },
      linux: { security_context: { namespace_options: { network: HOST_NETWORK } } },
    }),
  );
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);

/** Batches of each runtime's pods created (or removed) at a time, runtimes taking turns. */
const TURN = 50;

/**
 * Runs fn over each runtime's items TURN at a time, the runtimes taking turns, and returns each one's own time.
 * A runtime working while the other holds 1,000 pods pays for them: one runtime after the other, Podscope created
 * 1,000 pods in 38 s and containerd in 85 s (it went second), and tore them down in 137 s against 62 s (it went
 * first); taking turns, 59 s against 72 s and 83 s against 75 s.
 */
async function alternating<T>(
  items: Record<Runtime, T[]>,
  fn: (r: Runtime, batch: T[]) => Promise<void>,
): Promise<Record<Runtime, number>> {
  const took: Record<Runtime, number> = { podscope: 0, containerd: 0 };
  const rounds = Math.ceil(Math.max(items.podscope.length, items.containerd.length) / TURN);
  for (let k = 0; k < rounds; k++) {
    for (const r of k % 2 === 0 ? (['podscope', 'containerd'] as const) : (['containerd', 'podscope'] as const)) {
      const batch = items[r].slice(k * TURN, (k + 1) * TURN);
      if (batch.length === 0) continue;
      const t0 = performance.now();
      await fn(r, batch);
      took[r] += performance.now() - t0;
    }
  }
  return took;
}

async function time(samples: number[], fn: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await fn();
  samples.push(performance.now() - t0);
}

export async function runCriScale(opts: ScaleOptions): Promise<ScaleResult> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const sizes = [...new Set(opts.sizes)].sort((a, b) => a - b);
  const samplesPerOp = opts.samples ?? 30;
  const concurrency = opts.concurrency ?? 10;
  const tag = Date.now().toString(36);
  const env = await createRealEnv({ tag: 'p1-scale', subnet: 243, bridge: 'psp1-scale' });
  let daemon: Awaited<ReturnType<typeof startCriDaemon>> | undefined;
  let containerd: Awaited<ReturnType<typeof startContainerd>> | undefined;
  const conns: Partial<Record<Runtime, CriConnection>> = {};
  const ids: Record<Runtime, string[]> = { podscope: [], containerd: [] };
  const leftover = { podscope: 0, containerd: 0 };
  try {
    daemon = await startCriDaemon(env);
    containerd = await startContainerd({ bridge: 'psp1-sctd', subnet: 244 });
    conns.podscope = await connectCri(daemon.socketPath);
    conns.containerd = await connectCri(containerd.socketPath);
    const c = conns as Record<Runtime, CriConnection>;
    out(
      `# Status and List at scale: host-network pods (no CNI), ${samplesPerOp} samples per op; podscope=${c.podscope.version.runtimeVersion} containerd=${c.containerd.version.runtimeVersion}`,
    );
    const p50s: Record<Runtime, Partial<Record<Op, number[]>>> = { podscope: {}, containerd: {} };
    const w = [16, 9, 8, 9, 8, 8];
    for (const size of sizes) {
      const from = ids.podscope.length;
      const created = await alternating(
        { podscope: range(from, size), containerd: range(ids.containerd.length, size) },
        async (r, batch) => {
          ids[r].push(
            ...(await pool(
              batch,
              concurrency,
              async (i) => (await c[r].call((x) => x.runPodSandbox, { config: podConfig(i, r, tag), runtimeHandler: '' })).podSandboxId,
            )),
          );
        },
      );
      const samples: Record<Runtime, Record<Op, number[]>> = {
        podscope: Object.fromEntries(OPS.map((o) => [o, []])) as unknown as Record<Op, number[]>,
        containerd: Object.fromEntries(OPS.map((o) => [o, []])) as unknown as Record<Op, number[]>,
      };
      for (let j = 0; j < samplesPerOp; j++) {
        const order: Runtime[] = j % 2 === 0 ? ['podscope', 'containerd'] : ['containerd', 'podscope'];
        for (const r of order) {
          const k = (j * 7919) % size; // spread over old and new pods
          const id = ids[r][k]!;
          const s = samples[r];
          const calls: Record<Op, () => Promise<void>> = {
            Version: () => time(s.Version, () => c[r].call((x) => x.version, { version: '' })),
            Status: () => time(s.Status, () => c[r].call((x) => x.podSandboxStatus, { podSandboxId: id, verbose: false })),
            'Status verbose': () =>
              time(s['Status verbose'], () => c[r].call((x) => x.podSandboxStatus, { podSandboxId: id, verbose: true })),
            List: () =>
              time(s.List, async () => {
                const res = await c[r].call((x) => x.listPodSandbox, { filter: undefined });
                if (res.items.length < size) throw new Error(`${r}: ListPodSandbox returned ${res.items.length} of ${size} pods`);
              }),
            'List id=': () =>
              time(s['List id='], async () => {
                const res = await c[r].call((x) => x.listPodSandbox, { filter: { id, state: undefined, labelSelector: {} } });
                if (res.items.length !== 1) throw new Error(`${r}: ListPodSandbox by id returned ${res.items.length} pods`);
              }),
            'List label=': () =>
              time(s['List label='], async () => {
                const res = await c[r].call((x) => x.listPodSandbox, {
                  filter: { id: '', state: undefined, labelSelector: { 'bench/pod': `p${k}` } },
                });
                if (res.items.length !== 1) throw new Error(`${r}: ListPodSandbox by label returned ${res.items.length} pods`);
              }),
          };
          // The first call after the other runtime had the host pays for waking this server up; rotating the order
          // spreads that over every op instead of charging it all to the first one.
          for (let o = 0; o < OPS.length; o++) await calls[OPS[(o + j) % OPS.length]!]();
        }
      }
      out('');
      out(
        `${size} pods (created in ${fmt(created.podscope)} ms podscope, ${fmt(created.containerd)} ms containerd, ${concurrency} at a time; load ${await loadAverage()})`,
      );
      out(row(['op (ms)', 'podscope', 'p95', 'containerd', 'p95', 'ratio'], w));
      for (const op of OPS) {
        const p = samples.podscope[op];
        const d = samples.containerd[op];
        (p50s.podscope[op] ??= []).push(percentile(p, 50));
        (p50s.containerd[op] ??= []).push(percentile(d, 50));
        out(
          row(
            [
              op,
              fmt(percentile(p, 50)),
              fmt(percentile(p, 95)),
              fmt(percentile(d, 50)),
              fmt(percentile(d, 95)),
              `${(percentile(p, 50) / percentile(d, 50)).toFixed(2)}x`,
            ],
            w,
          ),
        );
      }
      out(
        `RSS at ${size} pods: podscope cri ${fmt((await rssMiB(daemon.pid)) ?? NaN)} MiB, containerd ${fmt((await rssMiB(containerd.pid)) ?? NaN)} MiB (without its shims)`,
      );
    }
    if (sizes.length > 1) {
      out('');
      out(`p50 at each size / p50 at ${sizes[0]} pods (flat = 1.0)`);
      out(row(['op', ...sizes.slice(1).flatMap((s) => [`ps@${s}`, `ctd@${s}`])], [16, ...sizes.slice(1).flatMap(() => [9, 9])]));
      for (const op of OPS) {
        const cells = sizes
          .slice(1)
          .flatMap((_, i) => (['podscope', 'containerd'] as const).map((r) => `${(p50s[r][op]![i + 1]! / p50s[r][op]![0]!).toFixed(2)}x`));
        out(row([op, ...cells], [16, ...sizes.slice(1).flatMap(() => [9, 9])]));
      }
    }
  } finally {
    // Tear down every pod either side made, 10 at a time, alternating as at creation, and say what is left.
    const live = { podscope: conns.podscope ? ids.podscope : [], containerd: conns.containerd ? ids.containerd : [] };
    const took = await alternating(live, async (r, batch) => {
      const conn = conns[r]!;
      await pool(batch, concurrency, async (id) => {
        await conn.call((x) => x.stopPodSandbox, { podSandboxId: id }).catch(() => undefined);
        await conn
          .call((x) => x.removePodSandbox, { podSandboxId: id })
          .catch((e: unknown) => out(`teardown ${r} ${id}: ${(e as Error).message}`));
      });
    });
    for (const r of ['podscope', 'containerd'] as const) {
      const conn = conns[r];
      if (!conn) continue;
      leftover[r] = await conn
        .call((x) => x.listPodSandbox, { filter: undefined })
        .then(
          (res) => res.items.length,
          () => -1,
        );
      if (live[r].length > 0) out(`teardown ${r}: stop+remove of ${live[r].length} pods in ${fmt(took[r])} ms; ${leftover[r]} left`);
      conn.close();
    }
    await daemon?.stop();
    await containerd?.stop();
    await env.teardown();
  }
  return { leftover, sizes };
}
