/** `podscope cnicheck ID [-o json]`: CNI CHECK of the pod's attachments and STATUS of the loaded networks. */
import { PodscopeError, notSupported } from '../../../shared/domain/errors';
import type { CniCheckReport, CniStatusReport } from '../../../shared/domain/measure';
import { withEndpoint } from '../api';
import { parseCommandArgs } from '../args';
import { EXIT_CODES } from '../exit-codes';

export const help = `podscope cnicheck [flags] ID
  Runs CNI CHECK for every network of the pod with its cached ADD result (lists >= 0.4.0, unless disableCheck) and
  CNI STATUS for every loaded network (lists >= 1.1.0); each plugin exec lands in the pod's trace (phase "check").
  A verb a list's version or a plugin does not have is reported as not supported, not as a failure.
  -o text|json`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' } });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'cnicheck needs exactly one sandbox id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const { check, status } = await withEndpoint(flags, async ({ measurements }) => {
    if (!measurements) throw notSupported('measurements', "CNI CHECK/STATUS need Podscope's own engine, not a CRI endpoint");
    return { check: await measurements.cniCheck(positionals[0]!), status: await measurements.cniStatus() };
  });
  if (output === 'json') process.stdout.write(`${JSON.stringify({ check, status }, null, 2)}\n`);
  else process.stdout.write(describe(check, status));
  return check.ok && status.ok ? 0 : EXIT_CODES.FailedPrecondition;
}

function describe(check: CniCheckReport, status: CniStatusReport): string {
  const lines = [`CHECK ${check.id} (${check.measuredAt}):`];
  for (const n of check.networks) lines.push(`  ${n.outcome.padEnd(12)} ${n.network}/${n.ifName} v${n.cniVersion}: ${n.message}`);
  lines.push(`STATUS (${status.measuredAt}):`);
  for (const n of status.networks) lines.push(`  ${n.outcome.padEnd(12)} ${n.network} v${n.cniVersion}: ${n.message}`);
  return `${lines.join('\n')}\n`;
}
