import type { ContainerFilter, ContainerState } from '../../../shared/domain/container';
import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';
import { age, shortId, table } from '../format';

export const help = `podscope ps [flags]
  Lists containers, newest first (running ones only unless --all or --state).
  --all, -a   --id PREFIX   --pod, -p POD_ID   --state created|running|exited|unknown   --label K=V (repeatable)
  --name REGEX   -o table|json   --no-trunc   -q (ids only)`;

const STATES: Record<string, ContainerState> = {
  created: 'CONTAINER_CREATED',
  running: 'CONTAINER_RUNNING',
  exited: 'CONTAINER_EXITED',
  unknown: 'CONTAINER_UNKNOWN',
};

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, {
    all: { type: 'boolean', short: 'a' },
    id: { type: 'string' },
    pod: { type: 'string', short: 'p' },
    state: { type: 'string', short: 's' },
    label: { type: 'string', multiple: true },
    name: { type: 'string' },
    output: { type: 'string', short: 'o' },
    'no-trunc': { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
  });
  const filter: ContainerFilter = {};
  if (typeof flags.id === 'string') filter.id = flags.id;
  if (typeof flags.pod === 'string') filter.podSandboxId = flags.pod;
  if (typeof flags.state === 'string') {
    const s = STATES[flags.state.toLowerCase().replace(/^container_/, '')];
    if (!s)
      throw new PodscopeError('InvalidArgument', `--state must be created, running, exited or unknown, not ${JSON.stringify(flags.state)}`);
    filter.state = s;
  } else if (!flags.all) filter.state = 'CONTAINER_RUNNING'; // crictl ps shows running containers by default
  for (const l of (flags.label as string[] | undefined) ?? []) {
    const i = l.indexOf('=');
    if (i <= 0) throw new PodscopeError('InvalidArgument', `--label must be KEY=VALUE, not ${JSON.stringify(l)}`);
    (filter.labelSelector ??= {})[l.slice(0, i)] = l.slice(i + 1);
  }
  const output = (flags.output as string | undefined) ?? 'table';
  if (output !== 'table' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be table or json, not ${JSON.stringify(output)}`);
  let list = await withApi(flags, (api) => api.listContainers(filter));
  if (typeof flags.name === 'string') {
    const re = new RegExp(flags.name);
    list = list.filter((c) => re.test(c.metadata.name));
  }
  if (flags.quiet) process.stdout.write(list.map((c) => `${c.id}\n`).join(''));
  else if (output === 'json') process.stdout.write(`${JSON.stringify({ containers: list }, null, 2)}\n`);
  else {
    const id = flags['no-trunc'] ? (x: string) => x : shortId;
    process.stdout.write(
      `${table(
        ['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'EXIT'],
        list.map((c) => [
          id(c.id),
          c.image,
          age(c.createdAt),
          c.state.replace('CONTAINER_', ''),
          c.metadata.name,
          String(c.metadata.attempt),
          id(c.podSandboxId),
          c.state === 'CONTAINER_EXITED' ? `${c.exitCode} ${c.reason}`.trim() : '-',
        ]),
      )}\n`,
    );
  }
  return 0;
}
