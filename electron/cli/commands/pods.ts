import { PodscopeError } from '../../../shared/domain/errors';
import type { SandboxFilter, SandboxState, SandboxSummary } from '../../../shared/domain/sandbox';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';
import { age, shortId, table } from '../format';
import { acrossNodes, chosenNodes, NODE_FLAGS, NODE_FLAGS_HELP, reportFailures } from '../nodes';

export const help = `podscope pods [flags]
  Lists pod sandboxes, newest first.
  --id PREFIX  --name REGEX  --namespace REGEX  --state ready|notready  --label K=V (repeatable)
  -o table|json   --no-trunc   -q (ids only)
${NODE_FLAGS_HELP}; every pod then carries its node (a NODE column, "node" in json)`;

const STATES: Record<string, SandboxState> = {
  ready: 'SANDBOX_READY',
  notready: 'SANDBOX_NOTREADY',
  sandbox_ready: 'SANDBOX_READY',
  sandbox_notready: 'SANDBOX_NOTREADY',
};

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(
    argv,
    {
      id: { type: 'string' },
      name: { type: 'string' },
      namespace: { type: 'string' },
      state: { type: 'string', short: 's' },
      label: { type: 'string', multiple: true },
      output: { type: 'string', short: 'o' },
      'no-trunc': { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      ...NODE_FLAGS,
    },
    { manyEndpoints: true },
  );
  const filter: SandboxFilter = {};
  if (typeof flags.id === 'string') filter.id = flags.id;
  if (typeof flags.name === 'string') filter.name = flags.name;
  if (typeof flags.namespace === 'string') filter.namespace = flags.namespace;
  if (typeof flags.state === 'string') {
    const s = STATES[flags.state.toLowerCase()];
    if (!s) throw new PodscopeError('InvalidArgument', `--state must be ready or notready, not ${JSON.stringify(flags.state)}`);
    filter.state = s;
  }
  for (const l of (flags.label as string[] | undefined) ?? []) {
    const i = l.indexOf('=');
    if (i <= 0) throw new PodscopeError('InvalidArgument', `--label must be KEY=VALUE, not ${JSON.stringify(l)}`);
    (filter.labelSelector ??= {})[l.slice(0, i)] = l.slice(i + 1);
  }
  const output = (flags.output as string | undefined) ?? 'table';
  if (output !== 'table' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be table or json, not ${JSON.stringify(output)}`);
  const nodes = await chosenNodes(flags);
  let pods: Array<SandboxSummary & { node?: string }>;
  let failed = false;
  if (nodes) {
    const answers = await acrossNodes(nodes, (api) => api.list(filter));
    reportFailures(answers);
    failed = answers.every((a) => a.error !== undefined);
    // newest first across nodes too, as on one
    pods = answers
      .flatMap((a) => (a.value ?? []).map((p) => ({ ...p, node: a.node.name })))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  } else pods = await withApi(flags, (api) => api.list(filter), 'list');
  if (flags.quiet) process.stdout.write(pods.map((p) => `${p.id}\n`).join(''));
  else if (output === 'json') process.stdout.write(`${JSON.stringify({ items: pods }, null, 2)}\n`);
  else {
    const id = flags['no-trunc'] ? (x: string) => x : shortId;
    const nodeColumn = nodes ? ['NODE'] : [];
    process.stdout.write(
      `${table(
        [...nodeColumn, 'POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'IP', 'HOST PORTS'],
        pods.map((p) => [
          ...(nodes ? [p.node ?? '-'] : []),
          id(p.id),
          age(p.createdAt),
          p.state.replace('SANDBOX_', ''),
          p.metadata.name,
          p.metadata.namespace,
          String(p.metadata.attempt),
          [p.ip, ...p.additionalIps].filter(Boolean).join(',') || '-',
          p.hostPorts.map((h) => `${h.hostIP ? `${h.hostIP}:` : ''}${h.hostPort}->${h.containerPort}/${h.protocol}`).join(',') || '-',
        ]),
      )}\n`,
    );
  }
  return failed ? 1 : 0;
}
