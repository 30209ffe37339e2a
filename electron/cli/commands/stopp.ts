import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope stopp [flags] ID...
  Stops pod sandboxes (any unique id prefix). Stopping an unknown or stopped sandbox succeeds, as in CRI.`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv);
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'stopp needs at least one sandbox id');
  await withApi(flags, async (api) => {
    for (const id of positionals) {
      await api.stop(id);
      process.stdout.write(`Stopped sandbox ${id}\n`);
    }
  });
  return 0;
}
