import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope start [flags] ID...
  Starts created containers (any unique id prefix).`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv);
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'start needs at least one container id');
  await withApi(flags, async (api) => {
    for (const id of positionals) {
      await api.startContainer(id);
      process.stdout.write(`${id}\n`);
    }
  });
  return 0;
}
