/**
 * `podscope throughput ID [-o json] [--duration MS]`: bulk TCP each way through the pod's veth, measured past the
 * tbf burst. The pieces are exported for `podscope probe ID --throughput`, which adds the same `throughput` object.
 */
import { PodscopeError, notSupported } from '../../../shared/domain/errors';
import { formatBitsPerSecond } from '../../../shared/domain/bandwidth';
import { formatBytes, type ThroughputDirectionReport, type ThroughputReport } from '../../../shared/domain/measure';
import { withEndpoint, type CliMeasurements } from '../api';
import { parseCommandArgs } from '../args';
import { EXIT_CODES } from '../exit-codes';

export const help = `podscope throughput [flags] ID
  Sends bulk TCP through the pod's real veth, host → pod (ingress) then pod → its gateway (egress), and reports the
  rate measured after the tbf burst against the requested rate, the burst in bytes read from the kernel, and the flow
  size below which the limit never engages. Each direction stops once the rate past the burst is known to ±5% (95%;
  the precision is reported), else at its time (default 15 s) or byte bound.
  -o text|json
  --duration MS  time bound per direction (500-20000)`;

/** The JSON shape `probe --throughput` and `throughput -o json` share. */
export interface ThroughputJson {
  measuredAt: string;
  ingress: ThroughputDirectionJson;
  egress: ThroughputDirectionJson;
}
export type ThroughputDirectionJson = Pick<
  ThroughputDirectionReport,
  | 'requestedBps'
  | 'measuredBps'
  | 'precision'
  | 'burstBytes'
  | 'appliedBps'
  | 'overallBps'
  | 'totalBytes'
  | 'elapsedMs'
  | 'pastBurst'
  | 'unshapedBelowBytes'
  | 'verdict'
  | 'note'
  | 'device'
>;

export function throughputJson(r: ThroughputReport): ThroughputJson {
  const one = (d: ThroughputDirectionReport): ThroughputDirectionJson => ({
    requestedBps: d.requestedBps,
    measuredBps: d.measuredBps === undefined ? undefined : Math.round(d.measuredBps),
    precision: d.precision === undefined ? undefined : Math.round(d.precision * 10000) / 10000,
    burstBytes: d.burstBytes,
    appliedBps: d.appliedBps,
    overallBps: Math.round(d.overallBps),
    totalBytes: d.totalBytes,
    elapsedMs: Math.round(d.elapsedMs),
    pastBurst: d.pastBurst,
    unshapedBelowBytes: d.unshapedBelowBytes,
    verdict: d.verdict,
    note: d.note,
    device: d.device,
  });
  return { measuredAt: r.measuredAt, ingress: one(r.ingress), egress: one(r.egress) };
}

/** Non-zero when a transfer failed or a limit did not hold: what `probe` folds into its own exit code. */
export function throughputExitCode(r: ThroughputReport): number {
  return [r.ingress, r.egress].some((d) => d.verdict === 'failed' || d.verdict === 'notShaped') ? EXIT_CODES.FailedPrecondition : 0;
}

const bps = (n: number | undefined) => (n === undefined ? '-' : formatBitsPerSecond(BigInt(Math.round(n))));

export function describeThroughput(r: ThroughputReport): string {
  // one size format (decimal: 1 MB = 10^6 bytes, like the rates' Mbit/s), each size saying what it counts: the
  // receiver counts payload, tbf's burst counts whole frames on the wire (headers too), so a transfer a few percent
  // smaller than the burst in payload can already have used it up
  const lines = [`Throughput (measured ${r.measuredAt}, ≤ ${r.durationMs} ms per direction; 1 MB = 10^6 bytes):`];
  for (const d of [r.ingress, r.egress]) {
    lines.push(
      `  ${d.direction.padEnd(8)} requested ${bps(d.requestedBps)}, tbf ${bps(d.appliedBps)}, measured ${bps(d.measuredBps)} past the burst (${bps(d.overallBps)} overall, ${formatBytes(d.totalBytes)} of payload received)  [${d.verdict}]`,
    );
    if (d.burstBytes !== undefined)
      lines.push(`           tbf burst ${formatBytes(d.burstBytes)} (${d.burstBytes} bytes, on the wire) on ${d.device ?? '?'}`);
    if (d.unshapedBelowBytes !== undefined)
      lines.push(
        `           WARNING: transfers smaller than ${formatBytes(d.unshapedBelowBytes)} are not shaped (counted on the wire; the tbf bucket starts full)`,
      );
    lines.push(`           ${d.note}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Runs the measurement (an in-process engine's; undefined over CRI), its progress going to `onProgress`. */
export async function measureThroughputVia(
  api: CliMeasurements | undefined,
  id: string,
  opts: { durationMs?: number; onProgress?: (line: string) => void } = {},
): Promise<ThroughputReport> {
  if (!api) throw notSupported('measurements', "throughput needs Podscope's own engine: it cannot be measured through a CRI endpoint");
  const off =
    opts.onProgress &&
    api.subscribe((e) => {
      if (e.type === 'sandbox.measureProgress')
        opts.onProgress!(
          `${e.progress.direction}: ${(e.progress.elapsedMs / 1000).toFixed(1)}/${e.progress.durationMs / 1000} s, ${formatBytes(e.progress.bytes)} received`,
        );
    });
  try {
    return await api.throughput(id, opts.durationMs === undefined ? {} : { durationMs: opts.durationMs });
  } finally {
    off?.();
  }
}

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' }, duration: { type: 'string' } });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'throughput needs exactly one sandbox id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const durationMs = flags.duration === undefined ? undefined : Number(flags.duration);
  if (durationMs !== undefined && (!Number.isInteger(durationMs) || durationMs < 500 || durationMs > 20_000))
    throw new PodscopeError('InvalidArgument', '--duration must be an integer number of ms within [500, 20000]');
  const tty = process.stderr.isTTY;
  const report = await withEndpoint(flags, ({ measurements }) =>
    measureThroughputVia(measurements, positionals[0]!, {
      durationMs,
      ...(tty ? { onProgress: (l: string) => process.stderr.write(`\r${l}    `) } : {}),
    }),
  );
  if (tty) process.stderr.write('\n');
  process.stdout.write(
    output === 'json' ? `${JSON.stringify({ id: report.id, throughput: throughputJson(report) }, null, 2)}\n` : describeThroughput(report),
  );
  return throughputExitCode(report);
}
