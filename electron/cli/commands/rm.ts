import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope rm [flags] ID...
  Removes containers. A running one is refused unless --force (then it is killed first, as crictl rm -f does).
  --force, -f   --all, -a (every container)`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { force: { type: 'boolean', short: 'f' }, all: { type: 'boolean', short: 'a' } });
  if (positionals.length === 0 && !flags.all) throw new PodscopeError('InvalidArgument', 'rm needs at least one container id (or --all)');
  await withApi(flags, async (api) => {
    const ids = flags.all ? (await api.listContainers()).map((c) => c.id) : positionals;
    for (const id of ids) {
      const st = await api.containerStatus(id);
      if (st.state === 'CONTAINER_RUNNING') {
        if (!flags.force) throw new PodscopeError('FailedPrecondition', `container ${id} is running: stop it first or use --force`);
        await api.stopContainer(st.id, 0);
      }
      await api.removeContainer(st.id);
      process.stdout.write(`${id}\n`);
    }
  });
  return 0;
}
