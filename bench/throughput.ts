/**
 * Throughput measurement cost for a shaped pod: a real pod (netns, Debian's CNI plugins with bandwidth, runc pause)
 * with kubernetes.io/{ingress,egress}-bandwidth annotations, then `throughput` on it; N times, each on a fresh pod
 * (a tbf bucket refills at the shaped rate: 193 MB at 10 Mbit/s takes minutes, so a second run on the same pod would
 * start with an empty bucket). Prints per run the wall time, the bytes moved each way and what was measured (rate,
 * precision, verdict); with --samples the receiver's byte counts too. Asserts nothing. Root only.
 * Bridge psc-ux173, subnets 10.173.0.0/24 and fd00:173::/64.
 *
 *   npx tsx bench/throughput.ts [--rate 10M] [-n 3]
 */
import { parseArgs } from 'node:util';
import { formatBitsPerSecond } from '../shared/domain/bandwidth';
import { formatMegabytes } from '../shared/domain/measure';
import { createRealEnv } from '../testkit/throwaway-env';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { rate: { type: 'string' }, n: { type: 'string', short: 'n' }, samples: { type: 'boolean' } },
  });
  const rate = values.rate ?? '10M';
  const n = Number(values.n ?? 3);
  const env = await createRealEnv({ tag: 'ux173', subnet: 173 });
  try {
    const engine = await env.engine();
    for (let i = 0; i < n; i++) {
      const { id } = await engine.run({
        config: {
          metadata: { name: `tp${i}`, namespace: 'podscope-ux173', uid: `uid-tp${i}` },
          annotations: { 'kubernetes.io/ingress-bandwidth': rate, 'kubernetes.io/egress-bandwidth': rate },
        },
      });
      const progress: string[] = [];
      const off = engine.subscribe((e) => {
        if (e.type === 'sandbox.measureProgress')
          progress.push(`${e.progress.direction[0]} ${e.progress.elapsedMs.toFixed(0)}ms ${(e.progress.bytes / 1e6).toFixed(2)}MB`);
      });
      const t0 = performance.now();
      const r = await engine.throughput!(id);
      const ms = performance.now() - t0;
      off();
      const bytes = r.ingress.totalBytes + r.egress.totalBytes;
      process.stdout.write(
        `run ${i + 1}: ${(ms / 1000).toFixed(2)} s, ${formatMegabytes(bytes)} moved, ${progress.length} progress events\n`,
      );
      for (const d of [r.ingress, r.egress]) {
        const bps = (x: number | undefined) => (x === undefined ? '-' : formatBitsPerSecond(BigInt(Math.round(x))));
        const precision = (d as { precision?: number }).precision;
        process.stdout.write(
          `  ${d.direction.padEnd(8)} ${(d.elapsedMs / 1000).toFixed(2)} s ${formatMegabytes(d.totalBytes).padStart(9)}  measured ${bps(d.measuredBps)}${precision === undefined ? '' : ` ±${(precision * 100).toFixed(1)}%`} vs tbf ${bps(d.appliedBps)} (burst ${d.burstBytes ?? '-'} B)  [${d.verdict}]\n`,
        );
      }
      if (values.samples) process.stdout.write(`  samples: ${progress.join(', ')}\n`);
      await engine.remove(id);
    }
    return 0;
  } finally {
    await env.teardown();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
