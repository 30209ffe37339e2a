import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope rmp [flags] ID...
  Removes pod sandboxes. Like crictl, a READY sandbox is refused unless --force (the engine itself always
  force-stops before removing, as containerd does).
  --force, -f   remove even when READY, and give up on a cleanup that cannot finish (after printing what is
                left behind on the host)
  --all, -a     remove every sandbox`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { force: { type: 'boolean', short: 'f' }, all: { type: 'boolean', short: 'a' } });
  if (positionals.length === 0 && !flags.all) throw new PodscopeError('InvalidArgument', 'rmp needs at least one sandbox id, or --all');
  // Like crictl: every id is tried, failures are reported at the end.
  const failures = await withApi(flags, async (api) => {
    const ids = flags.all ? (await api.list()).map((s) => s.id) : positionals;
    const errors: PodscopeError[] = [];
    for (const id of ids) {
      try {
        if (!flags.force) {
          const st = await api.status(id).catch((e: unknown) => {
            if (e instanceof PodscopeError && e.code === 'NotFound') return undefined;
            throw e;
          });
          if (st?.state === 'SANDBOX_READY')
            throw new PodscopeError('FailedPrecondition', `pod sandbox ${id} is running, please use --force to remove it or stop it first`);
        }
        await api.remove(id, { force: flags.force === true });
        process.stdout.write(`Removed sandbox ${id}\n`);
      } catch (e) {
        errors.push(e instanceof PodscopeError ? e : new PodscopeError('Internal', (e as Error).message));
      }
    }
    return errors;
  });
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1)
    throw new PodscopeError(
      failures[0]!.code,
      `${failures.length} sandboxes were not removed: ${failures.map((f) => f.message).join('; ')}`,
    );
  return 0;
}
