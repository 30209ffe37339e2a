import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';
import { withImages } from '../api';

export const help = `podscope rmi [flags] IMAGE...
  Removes images (by tag, digest reference, id or id prefix) with all their tags, as crictl rmi does. An image a
  container uses is refused.
  --all, -a   remove every image`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { all: { type: 'boolean', short: 'a' } });
  if (positionals.length === 0 && !flags.all) throw new PodscopeError('InvalidArgument', 'rmi needs at least one image, or --all');
  // Like crictl: each image is looked up (a missing one is an error), every one is tried, failures reported at the end.
  const failures = await withImages(flags, async (api) => {
    const refs = flags.all ? (await api.list()).map((i) => i.id) : positionals;
    const errors: PodscopeError[] = [];
    for (const ref of refs) {
      try {
        const st = await api.status(ref);
        if (!st) throw new PodscopeError('NotFound', `no such image ${ref}`);
        await api.remove(st.image.id);
        for (const t of st.image.repoTags.length > 0 ? st.image.repoTags : [st.image.id]) process.stdout.write(`Deleted: ${t}\n`);
      } catch (e) {
        errors.push(e instanceof PodscopeError ? e : new PodscopeError('Internal', (e as Error).message));
      }
    }
    return errors;
  });
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1)
    throw new PodscopeError(failures[0]!.code, `${failures.length} images were not removed: ${failures.map((f) => f.message).join('; ')}`);
  return 0;
}
