import { PodscopeError } from '../../../shared/domain/errors';
import type { SandboxStatus } from '../../../shared/domain/sandbox';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope inspectp [flags] ID...
  Shows a sandbox: network, IP selection, port mappings, bandwidth, and what every CNI plugin received.
  -o text|json   (json is the full verbose status, trace included)`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' } });
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'inspectp needs at least one sandbox id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json') throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const statuses = await withApi(flags, (api) => Promise.all(positionals.map((id) => api.status(id))));
  if (output === 'json') process.stdout.write(`${JSON.stringify(statuses.length === 1 ? statuses[0] : statuses, null, 2)}\n`);
  else process.stdout.write(statuses.map(describe).join('\n'));
  return 0;
}

function describe(s: SandboxStatus): string {
  const lines: string[] = [];
  const kv = (k: string, v: string) => lines.push(`${k.padEnd(16)}${v}`);
  kv('ID', s.id);
  kv('Name', s.name);
  kv('State', `${s.state} (${s.internalState})`);
  kv('Created', s.createdAt);
  kv('Network', s.hostNetwork ? 'host' : `${s.netnsPath ?? '-'}${s.netnsClosed ? ' (closed)' : ''}`);
  kv('Pause', `${s.pause.status}${s.pause.pid ? `, pid ${s.pause.pid}` : ''}`);
  kv('IP', s.ip || '-');
  if (s.additionalIps.length) kv('Additional IPs', s.additionalIps.join(', '));
  if (s.ipSelection) kv('IP selection', `${s.ipSelection.reason}; eth0 had ${s.ipSelection.eth0Ips.join(', ')}`);
  for (const d of s.portMappings) {
    const m = d.mapping;
    kv(`Port ${d.index}`, `${m.host_ip ? `${m.host_ip}:` : ''}${m.host_port} -> ${m.container_port}/${['tcp', 'udp', 'sctp'][m.protocol] ?? m.protocol}${d.passed ? '' : `  DROPPED: ${d.reason}`}`);
  }
  for (const dir of ['ingress', 'egress'] as const) {
    const b = s.bandwidthAnalysis[dir];
    if (b) kv(`Bandwidth ${dir}`, b.error ? `${b.raw}: ${b.error}` : `${b.raw} = ${b.bitsPerSecond} bit/s (${b.human})`);
  }
  for (const n of s.networks) {
    const ips = (n.result?.ips ?? []).map((i) => i.address).join(', ');
    kv(`CNI ${n.ifName}`, `${n.network} v${n.cniVersion}${ips ? `: ${ips}` : ''}`);
  }
  lines.push('Trace:');
  for (const t of s.trace) {
    const mark = t.ok ? ' ' : '!';
    const plugin = t.plugin ? ` exit=${t.plugin.exitCode}` : '';
    lines.push(`  ${mark} ${t.phase.padEnd(7)} ${t.durationMs.toFixed(1).padStart(8)} ms  ${t.label}${plugin}${t.error ? `  — ${t.error.message}` : ''}`);
  }
  if (s.lastError) lines.push(`Last error: ${s.lastError.code}: ${s.lastError.message}`);
  return `${lines.join('\n')}\n`;
}
