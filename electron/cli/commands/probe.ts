import { PodscopeError } from '../../../shared/domain/errors';
import { failingPaths, probeSucceeded, type ProbeReport } from '../../../shared/domain/probe';
import { withEndpoint } from '../api';
import { parseCommandArgs } from '../args';
import { describeThroughput, measureThroughputVia, throughputExitCode, throughputJson } from './throughput';

export const help = `podscope probe [flags] ID
  Measures reachability with real packets: each mapped host port from the host (127.0.0.1, the bridge gateway
  address, host_ip), container-port-only mappings on the pod IP, the pod's gateway, and every ready peer on the same
  network, both ways. Exit 0 when every applicable path is reachable, else 5 (FailedPrecondition) naming the failures.
  --throughput   then a bulk TCP transfer each way past the tbf burst (see \`podscope throughput\`); the exit code also
                 fails when a transfer failed or a requested limit did not hold
  -o text|json   json: {sandboxId, measuredAt, measuredBy, paths: [{kind, from, to, proto, verdict, rttMs?, answeredBy?}],
                 throughput?: {ingress: {requestedBps, measuredBps, burstBytes, …}, egress: {…}}}`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' }, throughput: { type: 'boolean' } });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'probe takes exactly one sandbox id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const { report, throughput } = await withEndpoint(flags, async ({ api, measurements }) => {
    const probe = await api.probe(positionals[0]!);
    return { report: probe, throughput: flags.throughput ? await measureThroughputVia(measurements, probe.sandboxId) : undefined };
  });
  if (output === 'json')
    process.stdout.write(`${JSON.stringify(throughput ? { ...report, throughput: throughputJson(throughput) } : report, null, 2)}\n`);
  else process.stdout.write(describe(report) + (throughput ? describeThroughput(throughput) : ''));
  const throughputCode = throughput ? throughputExitCode(throughput) : 0;
  if (probeSucceeded(report)) {
    if (throughputCode !== 0)
      process.stderr.write('podscope probe: FailedPrecondition: a throughput transfer failed or a requested limit did not hold\n');
    return throughputCode;
  }
  const failing = failingPaths(report);
  const what = failing.length
    ? failing.map((p) => `${p.kind} ${p.from} → ${p.to}: ${p.verdict}${p.answeredBy ? ` (answered by ${p.answeredBy})` : ''}`).join('; ')
    : report.errors.join('; ') || 'no applicable path';
  process.stderr.write(`podscope probe: FailedPrecondition: not every path is reachable: ${what}\n`);
  return 5;
}

function describe(r: ProbeReport): string {
  const lines = [`Probe of ${r.sandboxId}, measured at ${r.measuredAt} by ${r.measuredBy} in ${r.durationMs.toFixed(0)} ms`];
  for (const p of r.paths) {
    const rtt = p.rttMs !== undefined ? ` ${p.rttMs.toFixed(2)} ms` : '';
    const by = p.answeredBy ? ` by ${p.answeredBy.slice(0, 12)}` : '';
    lines.push(
      `  ${p.verdict.padEnd(13)} ${p.kind.padEnd(8)} ${p.from} → ${p.to}/${p.proto}${rtt}${by}${p.measured ? '' : ' (not measured)'}  ${p.note}`,
    );
  }
  if (r.peers && r.peers.measured < r.peers.ready)
    lines.push(`  peers: the newest ${r.peers.measured} of ${r.peers.ready} ready peers on the network were measured`);
  for (const e of r.errors) lines.push(`  !  ${e}`);
  return `${lines.join('\n')}\n`;
}
