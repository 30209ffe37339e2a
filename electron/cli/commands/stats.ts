import { withApi } from '../api';
import { parseCommandArgs } from '../args';
import { humanSize, shortId, table } from '../format';
import type { ContainerStats } from '../../../shared/domain/container';

export const help = `podscope stats [flags] [ID...]
  Resource usage of containers from their cgroups: cumulative CPU time and memory working set.
  --pod, -p POD_ID   -o table|json`;

/** decimal, as crictl stats prints memory and as every other size here (images, throughput): never MiB beside MB */
const size = (b?: string) => (b === undefined ? '-' : humanSize(Number(b)));
const cpu = (ns?: string) => (ns === undefined ? '-' : `${(Number(ns) / 1e9).toFixed(3)}s`);

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { pod: { type: 'string', short: 'p' }, output: { type: 'string', short: 'o' } });
  const stats: ContainerStats[] = await withApi(flags, async (api) =>
    positionals.length > 0
      ? Promise.all(positionals.map((id) => api.containerStats(id)))
      : api.listContainerStats({ ...(typeof flags.pod === 'string' && { podSandboxId: flags.pod }) }),
  );
  if (flags.output === 'json') process.stdout.write(`${JSON.stringify({ stats }, null, 2)}\n`);
  else
    process.stdout.write(
      `${table(
        ['CONTAINER', 'NAME', 'CPU TIME', 'MEM (WORKING SET)', 'MEM (USAGE)'],
        stats.map((s) => [shortId(s.id), s.metadata.name, cpu(s.cpuUsageCoreNs), size(s.memoryWorkingSetBytes), size(s.memoryUsageBytes)]),
      )}\n`,
    );
  return 0;
}
