import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope stop [flags] ID...
  Stops running containers: the stop signal (config, image or SIGTERM), then SIGKILL after --timeout.
  --timeout, -t SECONDS   grace period before SIGKILL (default 10; 0 kills at once)`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { timeout: { type: 'string', short: 't' } });
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'stop needs at least one container id');
  const timeout = Number((flags.timeout as string | undefined) ?? '10');
  if (!Number.isInteger(timeout) || timeout < 0)
    throw new PodscopeError('InvalidArgument', `--timeout must be a non-negative integer, not ${JSON.stringify(flags.timeout)}`);
  await withApi(flags, async (api) => {
    for (const id of positionals) {
      await api.stopContainer(id, timeout);
      process.stdout.write(`${id}\n`);
    }
  });
  return 0;
}
